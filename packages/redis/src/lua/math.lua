-- Integer helpers, as packages/core/src/math.ts. Every quantity is an integer below 2^53, exact in Lua's doubles.
-- math.fmod is C fmod (the sign of a, like JS %), exact; Lua's % operator is a - floor(a / b) * b and is not.

-- floor(a / b) for integers a and b > 0.
local function floor_div(a, b)
  local r = math.fmod(a, b)
  local q = (a - r) / b
  if r < 0 then return q - 1 end
  return q
end

-- ceil(a / b) for integers a and b > 0.
local function ceil_div(a, b)
  local r = math.fmod(a, b)
  local q = (a - r) / b
  if r > 0 then return q + 1 end
  return q
end

-- A wait that never ends (a cost above what the rule can ever hold); sent to the client as -1.
local INFINITY = math.huge

-- Whether a number read from a key is one this script could have written: a whole one from 0 to 2^53.
local floor = math.floor
local function whole(n)
  return type(n) == 'number' and n >= 0 and n <= 9007199254740992 and n == floor(n)
end

-- The numbers of a value this script wrote as `count` (3 or 4) little-endian doubles, each a whole one, then the key's
-- offset from the clock (see key-time.lua): a last double (never 0) when the value has one more, else 0. Nothing for a value of
-- another length, or with another number in it (something else wrote the key). Every algorithm that stores its state
-- whole decodes it with this (see `read` in main.lua).
local DOUBLES = { [3] = '<ddd', [4] = '<dddd', [5] = '<ddddd' }
local function whole_doubles(value, count)
  local length = #value / 8
  if length ~= count and length ~= count + 1 then return nil end
  local numbers = { struct.unpack(DOUBLES[length], value) }
  numbers[length + 1] = nil -- the position after the last value
  -- An offset is written only when there is one: a last 0 is no value this script wrote.
  if length == count then numbers[length + 1] = 0 elseif numbers[length] == 0 then return nil end
  for i = 1, count + 1 do
    if not whole(numbers[i]) then return nil end
  end
  return unpack(numbers, 1, count + 1)
end

-- The encoding of `count` numbers and the key's offset from the clock, the offset only when there is one.
local function pack_doubles(offset_ms, a, b, c, d)
  if d == nil then
    if offset_ms == 0 then return struct.pack('<ddd', a, b, c) end
    return struct.pack('<dddd', a, b, c, offset_ms)
  end
  if offset_ms == 0 then return struct.pack('<dddd', a, b, c, d) end
  return struct.pack('<ddddd', a, b, c, d, offset_ms)
end
