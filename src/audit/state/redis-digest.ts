/**
 * Window digests in Redis: one hash per tenant, field = window start (ms), value
 * `<endMs> <count> <hash>`, plus `_windowMs` and `_sinceMs`. The commit scripts apply a
 * commit's digests with `DIGEST_LUA` in the same script as the keys and the cursor, exactly
 * as applyDigestCommit (digest/digest-state.ts) does for the file store.
 */
import type { WindowDigest } from '../digest/window-digest.ts';
import type { DigestCommit, DigestState } from './store.ts';

/**
 * `apply_digests(key, spec)`: spec is the JSON of a DigestCommit ('' = none). The 128-bit
 * sum is added in four 32-bit limbs (exact in Lua's doubles).
 */
export const DIGEST_LUA = `
local function add128(a, b)
  local out = {}
  local carry = 0
  for i = 4, 1, -1 do
    local s = tonumber(string.sub(a, i * 8 - 7, i * 8), 16) + tonumber(string.sub(b, i * 8 - 7, i * 8), 16) + carry
    if s >= 4294967296 then carry = 1; s = s - 4294967296 else carry = 0 end
    out[i] = string.format('%08x', s)
  end
  return table.concat(out)
end
local function apply_digests(key, spec)
  if spec == '' then return end
  local d = cjson.decode(spec)
  if d.reset then
    redis.call('DEL', key)
    redis.call('HSET', key, '_sinceMs', d.reset)
  end
  redis.call('HSET', key, '_windowMs', d.windowMs)
  for _, w in ipairs(d.add) do
    local cur = redis.call('HGET', key, w[1])
    if cur then
      local _, n, h = string.match(cur, '^(%d+) (%-?%d+) (%x+)$')
      redis.call('HSET', key, w[1], w[2] .. ' ' .. string.format('%d', tonumber(n) + w[3]) .. ' ' .. add128(h, w[4]))
    else
      redis.call('HSET', key, w[1], w[2] .. ' ' .. string.format('%d', w[3]) .. ' ' .. w[4])
    end
  end
  local prune = tonumber(d.prune)
  for _, f in ipairs(redis.call('HKEYS', key)) do
    if string.sub(f, 1, 1) ~= '_' and tonumber(f) < prune then redis.call('HDEL', key, f) end
  end
  local since = tonumber(redis.call('HGET', key, '_sinceMs'))
  if since and since < prune then redis.call('HSET', key, '_sinceMs', d.prune) end
end
`;

const row = (w: WindowDigest): [string, string, number, string] => [String(w.startMs), String(w.endMs), w.count, w.hash];

/** A DigestCommit as the script's argument (numbers as decimal strings where Lua would print them as floats). */
export function digestArg(d: DigestCommit | undefined): string {
  if (!d) return '';
  return JSON.stringify({
    windowMs: String(d.windowMs),
    ...(d.reset ? { reset: String(d.reset.sinceMs) } : {}),
    add: d.add.map(row),
    prune: String(d.pruneBeforeMs),
  });
}

/** The hash read back (HGETALL). */
export function digestStateFromHash(h: Record<string, string>): DigestState {
  const num = (v: string | undefined): number | null => (v === undefined || v === '' ? null : Number(v));
  const windows: WindowDigest[] = [];
  for (const [f, v] of Object.entries(h)) {
    if (f.startsWith('_')) continue;
    const [end, count, hash] = v.split(' ');
    windows.push({ startMs: Number(f), endMs: Number(end), count: Number(count), hash: hash ?? '' });
  }
  windows.sort((a, b) => a.startMs - b.startMs);
  return { windowMs: num(h['_windowMs']), sinceMs: num(h['_sinceMs']), windows };
}
