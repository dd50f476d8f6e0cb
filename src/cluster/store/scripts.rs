//! The Lua scripts of [`super::Store`]: each runs alone in Redis, so what
//! it reads and writes is one step no other node sees half done. Their
//! keys and arguments are listed above each; the fenced ones (`finish`,
//! `sweep`) check the partition's lease before they touch anything, and
//! those a node's process runs while it crawls ([`guarded`]) check first
//! that it is still its name's latest process (their last `ARGV` is the
//! `generations` key).
//! What it is not: the calls (`super`), nor the replies' parsing.

use redis::Script;

/// The first lines of every script a node's process may run only while
/// it is its name's latest ([`super::Store::next_generation`]): an
/// identity with a generation (`ARGV[1]`, `name~generation~token`, as
/// every crawling process's is) must carry the one the `generations`
/// hash (the last `ARGV`) holds for its name, or the script writes
/// nothing and answers the error `SUPERSEDED`. (An identity without one,
/// a bare name, is a tool's or a test's: not checked.)
const GUARD: &str = r"
local gen_name, gen_mine = string.match(ARGV[1], '^([^~]*)~(%d+)~')
if gen_name ~= nil and redis.call('HGET', ARGV[#ARGV], gen_name) ~= gen_mine then
  return redis.error_reply('SUPERSEDED another process joined the crawl under this node name')
end
";

/// A script that runs only for its name's latest process ([`GUARD`]).
fn guarded(body: &str) -> Script {
    Script::new(&format!("{GUARD}{body}"))
}

/// The scripts, loaded once per connection (`EVALSHA`, falling back to
/// `EVAL` the first time).
pub(super) struct Scripts {
    pub(super) create: Script,
    pub(super) heartbeat: Script,
    pub(super) acquire: Script,
    pub(super) renew: Script,
    pub(super) release: Script,
    pub(super) add: Script,
    pub(super) finish: Script,
    pub(super) sweep: Script,
    pub(super) backlog: Script,
}

impl Scripts {
    pub(super) fn new() -> Self {
        Scripts {
            // KEYS: meta. ARGV: partitions, key0, key1, stream prefix, group.
            // Makes the crawl once (its streams and their group); returns
            // the settings it was made with.
            create: Script::new(
                r"
                if redis.call('EXISTS', KEYS[1]) == 0 then
                  redis.call('HSET', KEYS[1], 'partitions', ARGV[1], 'key0', ARGV[2], 'key1', ARGV[3])
                  for p = 0, tonumber(ARGV[1]) - 1 do
                    redis.call('XGROUP', 'CREATE', ARGV[4] .. p, ARGV[5], '0', 'MKSTREAM')
                  end
                end
                return redis.call('HMGET', KEYS[1], 'partitions', 'key0', 'key1')",
            ),
            // KEYS: nodes. ARGV: node, ttl ms. Marks the node alive until
            // now + ttl by Redis's clock (no node's clock is trusted),
            // forgets the expired, returns the live ones.
            heartbeat: guarded(
                r"
                local t = redis.call('TIME')
                local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
                redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
                redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
                return redis.call('ZRANGE', KEYS[1], 0, -1)",
            ),
            // KEYS: lease. ARGV: node, ttl ms. 1 if the node holds it now.
            acquire: guarded(
                r"
                if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
                if redis.call('GET', KEYS[1]) == ARGV[1] then
                  redis.call('PEXPIRE', KEYS[1], ARGV[2])
                  return 1
                end
                return 0",
            ),
            // KEYS: leases. ARGV: node, ttl ms. Per lease, 1 if still held
            // (and extended), 0 if lost.
            renew: guarded(
                r"
                local held = {}
                for i, k in ipairs(KEYS) do
                  if redis.call('GET', k) == ARGV[1] then
                    redis.call('PEXPIRE', k, ARGV[2])
                    held[i] = 1
                  else
                    held[i] = 0
                  end
                end
                return held",
            ),
            // KEYS: lease. ARGV: node.
            release: Script::new(
                r"
                if redis.call('GET', KEYS[1]) == ARGV[1] then
                  return redis.call('DEL', KEYS[1])
                end
                return 0",
            ),
            // KEYS: added, adds, then one stream per batch. ARGV: node,
            // the add's number, its URLs, the entries' field name, then
            // one entry's text per stream. Appends each text as an entry
            // of its stream and counts the URLs in `added`. Once per
            // number, as `finish`: the last number is kept in `adds` (one
            // field per node name), and an add sent again after its answer
            // was lost writes nothing twice (answers 0; 1 when written).
            add: guarded(
                r"
                local field, tag = gen_name or ARGV[1], ARGV[1] .. ' ' .. ARGV[2]
                if redis.call('HGET', KEYS[2], field) == tag then return 0 end
                for k = 3, #KEYS do
                  redis.call('XADD', KEYS[k], '*', ARGV[4], ARGV[k + 2])
                end
                redis.call('INCRBY', KEYS[1], ARGV[3])
                redis.call('HSET', KEYS[2], field, tag)
                return 1",
            ),
            // KEYS: records, reports, then (lease, done log, stream) per
            // partition. ARGV: node, group, the done log's chunk size, the
            // report's number, then per partition: done items (bytes), how
            // many, ids to acknowledge (n), the n ids. Fenced per
            // partition: 1 where the node holds the lease (and all was
            // written), 0 where it does not (nothing written). Once per
            // number: the answer is kept in `reports` (one field per node
            // name: the identity, the number and the answer), and a report
            // sent again after its answer was lost (a time-out, a dropped
            // connection, a read interrupted by SIGCONT) gets that answer
            // back and writes nothing twice. A partition's done log is a run of
            // strings, the key then KEY:1, KEY:2, ...: items go to the
            // first one under the chunk size (a Redis string stops at
            // 512 MB). The chunks' names are made here, not passed in
            // KEYS: ringcrawl runs on one Redis, not a Redis Cluster.
            finish: guarded(
                r"
                local node, group, chunk = ARGV[1], ARGV[2], tonumber(ARGV[3])
                local field, tag = gen_name or node, node .. ' ' .. ARGV[4] .. ' '
                local last = redis.call('HGET', KEYS[2], field)
                if last and string.sub(last, 1, #tag) == tag then
                  local held = {}
                  for c in string.gmatch(string.sub(last, #tag + 1), '%d') do held[#held + 1] = tonumber(c) end
                  return held
                end
                local a, records, held = 5, 0, {}
                for k = 3, #KEYS, 3 do
                  local count, n = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
                  local ok = redis.call('GET', KEYS[k]) == node
                  if ok then
                    if count > 0 then
                      local key, i = KEYS[k + 1], 0
                      while redis.call('STRLEN', key) >= chunk do
                        i = i + 1
                        key = KEYS[k + 1] .. ':' .. i
                      end
                      redis.call('APPEND', key, ARGV[a])
                      records = records + count
                    end
                    local i = 1
                    while i <= n do
                      local ids = {}
                      for j = i, math.min(n, i + 999) do ids[#ids + 1] = ARGV[a + 2 + j] end
                      redis.call('XACK', KEYS[k + 2], group, unpack(ids))
                      redis.call('XDEL', KEYS[k + 2], unpack(ids))
                      i = i + 1000
                    end
                  end
                  held[#held + 1] = ok and 1 or 0
                  a = a + 3 + n
                end
                if records > 0 then redis.call('INCRBY', KEYS[1], records) end
                redis.call('HSET', KEYS[2], field, tag .. table.concat(held))
                return held",
            ),
            // KEYS: (lease, stream) per partition. ARGV: node, group, min
            // idle ms. In each stream whose lease the node holds, claims
            // the entries pending for another consumer and idle that
            // long: a read that reached Redis after its node's lease ran
            // out left them there, and no one else would ever deliver
            // them. Asked consumer by consumer, so that this node's own
            // pending entries never fill the page. Returns XREADGROUP's
            // shape: {{stream, entries}, ...}.
            sweep: guarded(
                r"
                local node, group, idle = ARGV[1], ARGV[2], ARGV[3]
                local out = {}
                for k = 1, #KEYS, 2 do
                  if redis.call('GET', KEYS[k]) == node then
                    local summary = redis.call('XPENDING', KEYS[k + 1], group)
                    local ids = {}
                    for _, c in ipairs(summary[4] or {}) do
                      if c[1] ~= node and #ids < 1000 then
                        for _, e in ipairs(redis.call('XPENDING', KEYS[k + 1], group, 'IDLE', idle, '-', '+', 1000 - #ids, c[1])) do
                          ids[#ids + 1] = e[1]
                        end
                      end
                    end
                    if #ids > 0 then
                      out[#out + 1] = {KEYS[k + 1], redis.call('XCLAIM', KEYS[k + 1], group, node, idle, unpack(ids))}
                    end
                  end
                end
                return out",
            ),
            // KEYS: meta. ARGV: stream prefix, partitions. Entries in all
            // streams, at one instant (a script runs alone); -1 while no
            // root was ever added (the crawl has not started).
            backlog: Script::new(
                r"
                if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return -1 end
                local n = 0
                for p = 0, tonumber(ARGV[2]) - 1 do
                  n = n + redis.call('XLEN', ARGV[1] .. p)
                end
                return n",
            ),
        }
    }
}
