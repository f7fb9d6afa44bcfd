--[[
acquire-slots: lease concurrency slots of one key for a node (cluster-wide limit per key).

KEYS[1]  the key's slot set: a sorted set, member = one slot lease id, score = its expiry (ms,
         server time)
ARGV[1]  limit: most slots held at once over every node (integer >= 1)
ARGV[2]  wanted: slots asked for (integer >= 1)
ARGV[3]  ttl: ms a lease lasts unless renewed (integer >= 1)
ARGV[4]  holder: prefix of the lease ids granted (node id and a per-node counter; each id
         `<holder>:<i>` for i = 1..granted must be new)

Returns  {granted, held}: slots granted now (0..wanted) and slots held afterwards over every node

Guarantee: atomic on the server's clock: expired leases (a crashed or cut-off node's) are removed
first, then at most limit - held slots are granted, so the set never holds more than `limit`
unexpired leases. The whole set expires `ttl` after its last grant or renewal.
]]

if redis.replicate_commands then redis.replicate_commands() end

local limit = tonumber(ARGV[1])
local wanted = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local holder = ARGV[4]
if not limit or limit < 1 or not wanted or wanted < 1 or not ttl or ttl < 1 or not holder or holder == '' then
  return redis.error_reply('ERR acquire-slots: limit >= 1, wanted >= 1, ttl >= 1 and a holder are required')
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
local granted = math.max(0, math.min(wanted, limit - held))
for i = 1, granted do
  redis.call('ZADD', KEYS[1], now + ttl, holder .. ':' .. i)
end
if granted > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return {granted, held + granted}
