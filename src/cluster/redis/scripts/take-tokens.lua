--[[
take-tokens: lease up to `wanted` whole tokens from a token bucket shared by every node.

KEYS[1]  the bucket: a hash {tokens = tokens left (fractional), at = server time (ms) of that count}.
         An absent key is a full bucket (the key expires only once it would have refilled).
ARGV[1]  rate: tokens added per second (> 0, may be fractional)
ARGV[2]  burst: bucket size (>= 1)
ARGV[3]  wanted: most tokens to take (integer >= 1)

Returns  { granted, wait_ms, server_now_ms }
  granted        whole tokens taken, 0..min(wanted, floor(tokens)): a partial grant is allowed
  wait_ms        0 when a token is left after the take; otherwise milliseconds (rounded up, >= 1)
                 until the next whole token is there, on the server's clock
  server_now_ms  the server time the refill was computed at (integer ms)

Guarantee: the refill is computed from the Redis server's TIME inside the script, so every node
reads one clock whatever its own offset, and the read-refill-take-write runs atomically (Redis runs
one script at a time): over any interval T the tokens granted to all callers together are at most
burst + rate * T. A bad argument is refused with an error reply; nothing is written.
]]

if redis.replicate_commands then redis.replicate_commands() end -- Redis < 7: TIME before a write

local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local wanted = tonumber(ARGV[3])
if not rate or not (rate > 0 and rate <= 1e9) or not burst or not (burst >= 1 and burst <= 1e9)
  or not wanted or not (wanted >= 1 and wanted <= 1e9) then
  return redis.error_reply('ERR take-tokens: rate in (0, 1e9], burst and wanted in [1, 1e9] are required')
end
wanted = math.floor(wanted)

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000

local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if not tokens or not at then
  tokens = burst
elseif now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000)
end
-- A server clock that stepped back adds nothing, and the refill counts from the new reading: kept
-- at the later instant, the bucket refilled nothing until the clock caught up with it.
at = now

local granted = math.min(wanted, math.floor(tokens))
if granted < 0 then granted = 0 end
tokens = tokens - granted

local wait = 0
if tokens < 1 then wait = math.max(1, math.ceil((1 - tokens) * 1000 / rate)) end

redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
-- Gone once full again: an absent key reads as a full bucket, so expiry changes nothing.
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)

return { granted, wait, math.floor(now) }
