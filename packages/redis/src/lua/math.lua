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

-- The numbers of a value this script wrote as `count` (3 or 4) little-endian doubles, each a whole one; nothing for a
-- value of another length, or with another number in it (something else wrote the key). Every algorithm that stores
-- its state whole decodes it with this (see `read` in main.lua).
local function whole_doubles(value, count)
  if #value ~= 8 * count then return nil end
  local a, b, c, d = struct.unpack(count == 4 and '<dddd' or '<ddd', value)
  if count == 3 then d = 0 end -- the fourth value was the position after the third
  if whole(a) and whole(b) and whole(c) and whole(d) then return a, b, c, d end
  return nil
end
