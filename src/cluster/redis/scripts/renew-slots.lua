--[[
renew-slots: extend the leases a node holds on one key's slots, and give back those it no longer needs.

KEYS[1]  the key's slot set (see acquire-slots.lua)
ARGV[1]  ttl: ms the renewed leases last from now (integer >= 1)
ARGV[2]  count: how many lease ids follow to renew (integer >= 0)
ARGV[3 .. 2+count]            lease ids to renew
ARGV[3+count ..]              lease ids to give back

Returns  the lease ids among those to renew that were lost (expired or removed): the node no
         longer holds them

Guarantee: atomic on the server's clock. Only a lease still unexpired is renewed (ZADD XX after a
check of its score), so a lease that expired, and whose slot another node may already hold, is never
revived: the set never holds more than the limit. Giving back removes only the ids named (ZREM):
a second give-back, or one after expiry, removes nothing, so no count goes below zero.
]]

if redis.replicate_commands then redis.replicate_commands() end

local ttl = tonumber(ARGV[1])
local count = tonumber(ARGV[2])
if not ttl or ttl < 1 or not count or count < 0 or count > #ARGV - 2 then
  return redis.error_reply('ERR renew-slots: ttl >= 1 and a count of lease ids are required')
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lost = {}
for i = 3, 2 + count do
  local score = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[i]))
  if score and score > now then
    redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[i])
  else
    if score then redis.call('ZREM', KEYS[1], ARGV[i]) end
    table.insert(lost, ARGV[i])
  end
end
for i = 3 + count, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
end
if count > #lost then redis.call('PEXPIRE', KEYS[1], ttl) end
return lost
