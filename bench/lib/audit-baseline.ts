/**
 * The baseline of `npm run bench:audit`: what every exporter of this audit log must do, in a
 * plain single-threaded script — stream each window's body through csv-parse, a SHA-256 of
 * each row, one JSON document per row, appended to a file with an fdatasync per 1,000 rows.
 * Usage: node audit-baseline.ts <url> <startMs> <windows> <windowMs> <out.ndjson>; prints {rows, seconds}.
 */
import { hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { parse } from 'csv-parse';
import { request } from 'undici';

const [url, start, windows, windowMs, out] = process.argv.slice(2) as [string, string, string, string, string];
const iso = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;
const file = await open(out, 'a');
let rows = 0;
let lines: string[] = [];
const flush = async (): Promise<void> => {
  await file.write(lines.join(''));
  await file.datasync();
  lines = [];
};
const started = performance.now();
for (let w = 0; w < Number(windows); w++) {
  const from = Number(start) + w * Number(windowMs);
  const query = new URLSearchParams({ start: iso(from - 1000), end: iso(from + Number(windowMs) + 1000) });
  const res = await request(`${url}/api/v1/audit-logs/export?${query}`, { headers: { authorization: 'Bearer baseline' } });
  for await (const record of res.body.pipe(parse({ bom: true, columns: true })) as AsyncIterable<Record<string, string>>) {
    const key = hash('sha256', Object.values(record).join('\u0000'), 'hex');
    lines.push(`${JSON.stringify({ _key: key, ...record })}\n`);
    if (++rows % 1000 === 0) await flush();
  }
}
await flush();
await file.close();
process.stdout.write(`${JSON.stringify({ rows, seconds: (performance.now() - started) / 1000 })}\n`);
