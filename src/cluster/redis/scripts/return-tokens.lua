--[[
return-tokens: give back tokens a node leased and did not use (its lease ran out, or it stopped).

KEYS[1]  the bucket (see take-tokens.lua)
ARGV[1]  rate: tokens added per second (> 0), as in take-tokens
ARGV[2]  burst: bucket size (>= 1)
ARGV[3]  count: tokens given back (>= 0)

Returns  tokens in the bucket afterwards, rounded down (burst when the bucket is absent: full)

Guarantee: atomic refill-then-add on the server's clock, capped at `burst`: giving tokens back never
lets the bucket hold more than a full bucket, so the bound of take-tokens still holds (returned
tokens were taken and not used). An absent bucket is full already: nothing is written.
]]

if redis.replicate_commands then redis.replicate_commands() end

local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local count = tonumber(ARGV[3])
if not rate or not (rate > 0 and rate <= 1e9) or not burst or not (burst >= 1 and burst <= 1e9)
  or not count or not (count >= 0 and count <= 1e9) then
  return redis.error_reply('ERR return-tokens: rate in (0, 1e9], burst in [1, 1e9] and count in [0, 1e9] are required')
end

local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if not tokens or not at then return math.floor(burst) end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000)
end
at = now -- after a step back of the server's clock too (see take-tokens.lua)
tokens = math.min(burst, tokens + count)

redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return math.floor(tokens)
