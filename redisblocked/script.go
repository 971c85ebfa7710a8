package redisblocked

import (
	"crypto/sha1"
	"encoding/hex"
)

// The Script method's Lua scripts (Redis 7's Lua 5.1). Both take the
// shard as KEYS[1] and, as ARGV[1], its data bytes (where its trailer
// starts); they refuse a shard whose trailer does not begin with the
// marker (a retired shard is a hash: GETRANGE fails with WRONGTYPE; a
// missing one reads as ""), so a script never writes to a key that is not
// a live shard. Redis's unpack takes fewer than 8000 values: the BITFIELD
// calls are made in groups.

// addScript: ARGV[2] the number of keys (added to the shard's counter),
// ARGV[3…] the bits to set, as Redis bit offsets in the shard.
const addScript = `local t = tonumber(ARGV[1])
if redis.call('GETRANGE', KEYS[1], t, t + 7) ~= 'bloomlab' then
  return redis.error_reply('BLOOMLABRETIRED ' .. KEYS[1] .. ' is not a live shard')
end
local a, n = {}, 0
for i = 3, #ARGV do
  a[n + 1], a[n + 2], a[n + 3], a[n + 4] = 'SET', 'u1', ARGV[i], '1'
  n = n + 4
  if n == 4000 then
    redis.call('BITFIELD', KEYS[1], unpack(a, 1, n))
    n = 0
  end
end
redis.call('BITFIELD', KEYS[1], 'INCRBY', 'i64', t * 8 + 64, ARGV[2], unpack(a, 1, n))
return 1
`

// containsScript: ARGV[2] k, ARGV[3…] k bit offsets per key. It answers
// one character per key: '1' (every bit set: may be present) or '0'.
const containsScript = `local t = tonumber(ARGV[1])
if redis.call('GETRANGE', KEYS[1], t, t + 7) ~= 'bloomlab' then
  return redis.error_reply('BLOOMLABRETIRED ' .. KEYS[1] .. ' is not a live shard')
end
local k = tonumber(ARGV[2])
local nk = (#ARGV - 2) / k
if k < 1 or nk ~= math.floor(nk) then
  return redis.error_reply('ERR bloomlab query script: k = ' .. ARGV[2] .. ' with ' .. (#ARGV - 2) .. ' offsets')
end
local g = math.max(1, math.floor(1300 / k))
local out = {}
local first = 0
while first < nk do
  local last = math.min(first + g, nk)
  local a, n = {}, 0
  for j = 3 + first * k, 2 + last * k do
    a[n + 1], a[n + 2], a[n + 3] = 'GET', 'u1', ARGV[j]
    n = n + 3
  end
  local r = redis.call('BITFIELD_RO', KEYS[1], unpack(a, 1, n))
  local p = 1
  for key = first + 1, last do
    local v = '1'
    for b = 1, k do
      if r[p] == 0 then v = '0' end
      p = p + 1
    end
    out[key] = v
  end
  first = last
end
return table.concat(out)
`

func sha(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

var (
	addSHA      = sha(addScript)
	containsSHA = sha(containsScript)
)
