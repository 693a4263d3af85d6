-- Integer helpers, as packages/core/src/math.ts. Every quantity is an integer below 2^53, exact in Lua's doubles.
-- math.fmod is C fmod (the sign of a, like JS %), exact. Lua's % operator is a - floor(a / b) * b, computed in the VM:
-- for integers 0 <= a < 2^53 and b > 0 it is exact too (the quotient never rounds across a whole number, for the
-- reason math.ts gives for floorDiv, and floor(a / b) * b <= a), but not for a negative a, whose floor(a / b) * b can
-- pass -2^53. The operator costs Redis about 80 instructions, a call of a C function (math.fmod, math.floor,
-- tonumber, type) about 800, and the algorithms divide a time or a count, never negative, on every decision.

-- floor(a / b) for integers a and b > 0.
local function floor_div(a, b)
  if a >= 0 then return (a - a % b) / b end
  local r = math.fmod(a, b)
  local q = (a - r) / b
  if r < 0 then return q - 1 end
  return q
end

-- ceil(a / b) for integers a and b > 0.
local function ceil_div(a, b)
  local r
  if a >= 0 then r = a % b else r = math.fmod(a, b) end
  local q = (a - r) / b
  if r > 0 then return q + 1 end
  return q
end

-- A wait that never ends (a cost above what the rule can ever hold); sent to the client as -1.
local INFINITY = math.huge

-- Whether a number read from a key (struct.unpack gives only numbers) is one this script could have written: a whole
-- one from 0 to 2^53. NaN fails every comparison, and an infinity the bound.
local function whole(n)
  return n >= 0 and n <= 9007199254740992 and n % 1 == 0
end

-- Whether five such numbers all are: whole() of each, in one call rather than five (a call of a Lua function costs
-- Redis about 400 instructions, and every decode checks its value's numbers).
local function all_whole(a, b, c, d, e)
  return a >= 0 and b >= 0 and c >= 0 and d >= 0 and e >= 0
    and a <= 9007199254740992 and b <= 9007199254740992 and c <= 9007199254740992 and d <= 9007199254740992
    and e <= 9007199254740992 and a % 1 == 0 and b % 1 == 0 and c % 1 == 0 and d % 1 == 0 and e % 1 == 0
end

-- The numbers of a value this script wrote as `count` (3 or 4) little-endian doubles, each a whole one, then the key's
-- offset from the clock (see key-time.lua): a last double (never 0) when the value has one more, else 0. Nothing for a value of
-- another length, or with another number in it (something else wrote the key). Every algorithm that stores its state
-- whole decodes it with this (see `read` in main.lua).
-- Each case unpacks into locals: a table of the numbers and unpack() of it cost Redis about 0.7 microseconds per
-- decision (batches of 16 fixed-window requests). struct.unpack also returns the position after the last value; the
-- assignments drop it.
local function whole_doubles(value, count)
  -- A state of 3 numbers checks a fourth, 0, with them.
  local length, a, b, c, d, offset_ms = #value, nil, nil, nil, 0, 0
  if count == 3 and length == 24 then
    a, b, c = struct.unpack('<ddd', value)
  elseif count == 3 and length == 32 then
    a, b, c, offset_ms = struct.unpack('<dddd', value)
  elseif count == 4 and length == 32 then
    a, b, c, d = struct.unpack('<dddd', value)
  elseif count == 4 and length == 40 then
    a, b, c, d, offset_ms = struct.unpack('<ddddd', value)
  else
    return nil
  end
  -- An offset is written only when there is one: a last 0 is no value this script wrote.
  if length > count * 8 and offset_ms == 0 then return nil end
  if not all_whole(a, b, c, d, offset_ms) then return nil end
  if count == 3 then return a, b, c, offset_ms end
  return a, b, c, d, offset_ms
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
