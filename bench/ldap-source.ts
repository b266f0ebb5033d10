/**
 * `npm run bench:ldap`: the LDAP source against the file source, through the real CLI.
 * The same directory is bulk-loaded into a private slapd (slapadd, back_mdb; pages of 1,000
 * under a 1,000-entry size limit, like AD) and written as a file-source JSON document; the
 * simulator (its own process) is seeded with exactly what the engine would create for it, so
 * `scim-audit-sync plan --json` is a no-op that still lists and compares every object. Each
 * plan runs in its own process: wall time, the engine's own timings and peak RSS (VmHWM).
 * The LDAP run logs at debug level, so its per-page lines show heap and RSS page by page.
 *
 *   node bench/ldap-source.ts [--users 50000] [--groups 2000] [--cpu-prof DIR]
 *   LDAP_BENCH_1M=1 node bench/ldap-source.ts      # 1,000,000 users + 50,000 groups
 *
 * Needs slapd + ldap-utils (see test/helpers/slapd.ts). Writes its section of bench/RESULTS.md.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startSlapd, type SlapdHandle } from '../test/helpers/slapd.ts';
import { GROUPS, PEOPLE, ldifEntries, membershipCount, writeJsonDirectory } from './lib/ldap-directory.ts';
import { describeMachine } from './lib/machine.ts';
import { runMeasured, type MeasuredRun } from './lib/peak-rss.ts';
import { writeResultsSection } from './lib/results-md.ts';
import { BIN, startSimulatorProcess } from './lib/simulator-process.ts';

const TOKEN = 'bench-token';
const ONE_MILLION = process.env['LDAP_BENCH_1M'] === '1';

/** Profiling findings behind the 1M numbers (the LDAP read alone, node --cpu-prof, debug logging, staged heap). */
const ANALYSIS = [
  "### Where the LDAP read's time and memory go at 1,000,000 users (profiled 2026-11-25)",
  '',
  "- The source's read() alone in its own process (same slapd and directory, `--cpu-prof`, machine load ~10 on 2 cores): 182 s wall for 63 s user + 13 s system CPU. Users 134 s (1,000 pages, slower as the heap grows); groups 48 s, of which 26 s is the first group page: the 5 groups of 100,000 members, 4.5 MB entries. Self time: garbage collection 33 %; the first hash-table lookups of each user's DN key, externalId and userName (1M-entry Maps/Sets, cache misses) ~15 %; member DN → id lookups ~10 %; ldapts BER parsing and entry objects ~15 %; ldapts `Buffer.concat` re-copying a partly received entry on every socket chunk ~9 % (quadratic in the entry's size: the 100k-member groups; an upstream fix would be to collect chunks and concatenate once); waiting for slapd 7 %.",
  '- Before this change (every raw entry of a search held until the search ended, member lists as DN strings) the same read took 283 s wall, 87 s user CPU; now 182 s, 63 s (with the profiler on).',
  '- Memory: the raw pages are no longer held, but V8 lets garbage build up to about twice the live result between collections when it may (a 4 GB default heap here), so the uncapped peak RSS of the read alone stays ~2.0 GB either way. With the heap capped at 1,100 MB (`--max-old-space-size=1100`) the read completes at 1,125 MB peak RSS in the same 182 s, where the old code runs out of heap (fatal OOM after 315 s). What the read keeps is ~700 bytes a user: the normalized user and its strings (~450 B) and the DN → id, id and name indexes.',
];

interface Timings {
  sourceMs: number;
  platformMs: number;
  planMs: number;
}

interface PageLine {
  search: string;
  page: number;
  entries: number;
  heapUsedMb: number;
  rssMb: number;
}

interface PlanRun {
  label: string;
  run: MeasuredRun;
  timings: Timings;
  pages: PageLine[];
}

function logLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  }
  return out;
}

/** `plan --json` in its own process; its log (stderr) goes to a file, whole. */
async function plan(label: string, dir: string, config: string, cpuProfDir: string | undefined): Promise<PlanRun> {
  const logFile = join(dir, `${label}.log`);
  const node = [...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []), BIN, 'plan', '--config', config, '--json'];
  // exec: the measured pid is node itself, with stderr redirected by the shell.
  const run = await runMeasured('sh', ['-c', `exec "$0" "$@" 2>"${logFile}"`, process.execPath, ...node], {
    keepStdout: true,
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
  });
  const log = logLines(readFileSync(logFile, 'utf8'));
  let summary: { changes: number; skipped: number };
  try {
    summary = (JSON.parse(run.stdout) as { summary: { changes: number; skipped: number } }).summary;
  } catch {
    throw new Error(`${label} plan: exit ${run.code}, stdout is not JSON\n${readFileSync(logFile, 'utf8').slice(-3000)}`);
  }
  if (run.code !== 0 || summary.changes !== 0 || summary.skipped !== 0)
    throw new Error(`${label} plan is not a no-op: exit ${run.code} ${JSON.stringify(summary)}`);
  const timings = log.find((l) => l['timings'] !== undefined)?.['timings'] as Timings | undefined;
  if (!timings) throw new Error(`${label} plan: no "plan computed" timings line in its log`);
  const pages = log.filter((l) => l['msg'] === 'LDAP page read') as unknown as PageLine[];
  return { label, run, timings, pages };
}

/**
 * Heap after each user page, by tenths of the search: the lowest reading of a tenth (just after
 * a collection) tracks what is kept, the highest adds the garbage V8 lets build up between
 * collections. Kept memory grows with the users read, not with pages held.
 */
function pageTable(pages: PageLine[]): string[] {
  const userPages = pages.filter((p) => p.search.startsWith('users'));
  if (userPages.length < 10) return ['(too few per-page lines: the LDAP source logs them at debug level)'];
  const rows: string[] = [];
  let read = 0;
  for (let k = 0; k < 10; k++) {
    const slice = userPages.slice(Math.floor((k * userPages.length) / 10), Math.floor(((k + 1) * userPages.length) / 10));
    for (const p of slice) read += p.entries;
    const heaps = slice.map((p) => p.heapUsedMb);
    const min = Math.min(...heaps);
    const last = slice[slice.length - 1] as PageLine;
    rows.push(
      `| ${(slice[0] as PageLine).page}–${last.page} | ${read.toLocaleString('en-US')} | ${min.toFixed(0)} | ${Math.max(...heaps).toFixed(0)} | ${Math.max(...slice.map((p) => p.rssMb)).toFixed(0)} |`,
    );
  }
  const groupPages = pages.filter((p) => p.search.startsWith('groups'));
  const groupMax = groupPages.length ? Math.max(...groupPages.map((p) => p.heapUsedMb)).toFixed(0) : '–';
  return [
    '| user pages | users read | heap used, lowest (MB) | heap used, highest (MB) | RSS, highest (MB) |',
    '|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `Within each tenth the heap rises with garbage and drops at each collection; the lowest readings follow what is kept (the mapped users and their DN → id, id and name indexes). Each page of ${(userPages[0] as PageLine).entries.toLocaleString('en-US')} raw entries is mapped and dropped before the next is handled. ${groupPages.length} group pages follow (heap at most ${groupMax} MB).`,
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      users: { type: 'string', default: ONE_MILLION ? '1000000' : '50000' },
      groups: { type: 'string', default: ONE_MILLION ? '50000' : '2000' },
      'cpu-prof': { type: 'string' },
    },
  });
  const users = Number(values.users);
  const groups = Number(values.groups);
  const cpuProf = values['cpu-prof'];
  const memberships = membershipCount(users, groups);
  const dir = mkdtempSync(join(tmpdir(), 'bench-ldap-'));
  const n0 = (x: number): string => Math.round(x).toLocaleString('en-US');
  const s = (ms: number): string => (ms / 1000).toFixed(1);
  const say = (m: string): boolean => process.stderr.write(`[bench:ldap] ${m}\n`);

  let sl: SlapdHandle | undefined;
  let sim: Awaited<ReturnType<typeof startSimulatorProcess>> | undefined;
  try {
    let t = performance.now();
    const directoryPath = join(dir, 'directory.json');
    writeJsonDirectory(directoryPath, users, groups);
    const jsonMs = performance.now() - t;
    say(`directory.json written in ${s(jsonMs)} s`);
    t = performance.now();
    sl = await startSlapd({ entries: ldifEntries(users, groups), sizeLimit: 1000 });
    const loadMs = performance.now() - t;
    say(`slapd bulk-loaded (LDIF + slapadd) in ${s(loadMs)} s`);
    t = performance.now();
    const ledgerOut = join(dir, 'state', 'bench', 'ledger.json');
    sim = await startSimulatorProcess({ token: TOKEN, maxPageSize: 1000, seedDirectory: directoryPath, ledgerOut });
    const seedMs = performance.now() - t;
    say(`simulator seeded in ${s(seedMs)} s`);

    writeFileSync(join(dir, 'password'), sl.readerPassword);
    // A page of groups holding the large ones (users / 10 members each) is bigger than the default 32 MB cap.
    const platform = { baseUrl: sim.url, token: TOKEN, allowInsecureHttp: true, maxResponseMegabytes: 512, scim: { pageSize: 1000 } };
    const common = { tenant: 'bench', platform, state: { dir: join(dir, 'state') }, logging: { level: 'debug' } };
    const ldapSource = {
      type: 'ldap',
      url: sl.url,
      allowInsecure: true,
      bindDn: sl.readerDn,
      bindPasswordFile: 'password',
      pageSize: 1000,
      users: { baseDn: PEOPLE, attributes: { extra: { department: 'departmentNumber' } } },
      groups: { baseDn: GROUPS },
    };
    const fileSource = { type: 'file', path: 'directory.json' };
    writeFileSync(join(dir, 'ldap.yaml'), JSON.stringify({ ...common, provisioning: { source: ldapSource } }));
    writeFileSync(join(dir, 'file.yaml'), JSON.stringify({ ...common, provisioning: { source: fileSource } }));

    const file = await plan('file', dir, join(dir, 'file.yaml'), undefined);
    say(`file plan ${s(file.run.wallMs)} s, ${file.run.peakRssMb?.toFixed(0)} MB`);
    const ldap = await plan('ldap', dir, join(dir, 'ldap.yaml'), cpuProf);
    say(`ldap plan ${s(ldap.run.wallMs)} s, ${ldap.run.peakRssMb?.toFixed(0)} MB`);

    const row = (r: PlanRun): string =>
      `| ${r.label} | ${s(r.timings.sourceMs)} | ${s(r.timings.platformMs)} | ${s(r.timings.planMs)} | ${s(r.run.wallMs)} | ${r.run.peakRssMb?.toFixed(0)} |`;
    const ratio = ldap.run.wallMs / file.run.wallMs;
    const sourceRatio = ldap.timings.sourceMs / file.timings.sourceMs;
    const section = [
      ONE_MILLION ? '## LDAP source at 1,000,000 users (`LDAP_BENCH_1M=1 npm run bench:ldap`)' : '## LDAP source (`npm run bench:ldap`)',
      '',
      `${describeMachine()}. ${n0(users)} users, ${n0(groups)} groups, ${n0(memberships)} memberships (every user in two groups; 5 groups of ${n0(users / 10)} members); the same directory bulk-loaded into slapd (back_mdb, read in pages of 1,000 under a 1,000-entry size limit) and as a file-source JSON document. Each \`scim-audit-sync plan --json\` runs in its own process against the simulator (another process) seeded with exactly what the engine would create, so both plans are no-ops that list and compare every object (\`scim.pageSize: 1000\`, \`maxResponseMegabytes: 512\` for the pages holding the large groups).`,
      '',
      `Set-up: JSON directory written in ${s(jsonMs)} s; LDIF generated + slapadd in ${s(loadMs)} s; simulator seeded in ${s(seedMs)} s.`,
      '',
      '| source | source read (s) | platform listing (s) | plan (s) | read + plan, wall (s) | peak RSS (MB) |',
      '|---|---:|---:|---:|---:|---:|',
      row(file),
      row(ldap),
      '',
      `LDAP ÷ file: read + plan (wall) **×${ratio.toFixed(2)}** (aim ≤ ×2: ${ratio <= 2 ? 'met' : '**not met**'}); source read alone ×${sourceRatio.toFixed(2)}; peak RSS ×${((ldap.run.peakRssMb ?? 0) / (file.run.peakRssMb ?? 1)).toFixed(2)}.`,
      '',
      "### LDAP memory page by page (the source's debug line after each page)",
      '',
      ...pageTable(ldap.pages),
      ...(ONE_MILLION ? ['', ...ANALYSIS] : []),
    ].join('\n');
    process.stdout.write(`${section}\n`);
    // Its own section, so the short default run does not replace the 1M figures.
    await writeResultsSection(ONE_MILLION ? 'ldap-source-1m' : 'ldap-source', section);
  } finally {
    await sim?.stop();
    await sl?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
