/**
 * `npm run bench:changes`: change-driven sync, measured from the platform's side.
 *
 * A real slapd is bulk-loaded (slapadd, offline) with 100,000 users + 5,000 groups
 * (bench/lib/ldap-directory.ts), or with `--directory samba` a Samba AD domain controller with
 * 10,000 users + 500 groups (bench/lib/change-directory.ts); the platform simulator runs in its own process and logs
 * every SCIM request it acknowledges (bench/lib/request-log.ts); the shipped CLI makes the
 * initial full reconcile (`apply`). Then the process under test runs and, once idle, a driver
 * makes 300 directory changes at 5 per second through real LDAP add / modify / modrdn / delete
 * (joiners, leavers disabled and deleted, renames, attribute changes, group moves;
 * bench/lib/ldap-change-driver.ts, samba-change-driver.ts), recording when the directory accepted each. Measured:
 *
 * - propagation: from the directory's acceptance of a change to the simulator's
 *   acknowledgement of the last platform write it needs (p50/p95/p99);
 * - platform requests per changed user, group membership writes counted apart, and full
 *   listings (GET /Users or /Groups without a filter) during the change phase;
 * - the next full plan (`plan --json`): empty except what the directory's change mechanism
 *   cannot see (OpenLDAP keeps no trace of a deleted entry: a deleted leaver's own
 *   deprovisioning waits for the full reconcile, which the bench then runs and times apart;
 *   the memberships of deleted users are removed through the change path, as their groups
 *   changed; Active Directory keeps tombstones, seen through Show Deleted), then empty after
 *   that full reconcile;
 * - idle: CPU (utime + stime of /proc/<pid>/stat, children included) and RSS of the process
 *   under test over `--idle-minutes` of idle polling.
 *
 * The process under test (`--process`):
 *   watch      `scim-audit-sync watch --config F`, in the foreground, no Redis;
 *   daemon     `scim-audit-sync daemon --config F` with Redis (127.0.0.1:6379);
 *   full-loop  the baseline before change-driven sync: back-to-back full reconciles
 *              (`apply`), each in its own process, for as long as changes are outstanding;
 *   auto       (default) watch when the CLI has the command, otherwise daemon.
 *
 *   node bench/changes.ts [--process auto] [--directory slapd|samba] [--users N] [--groups N]
 *        [--changes 300] [--rate 5] [--idle-minutes 60] [--settle-seconds 180]
 *        [--ldap-poll-seconds S (not a default: to compare)] [--from-sources] [--no-results]
 *        [--seed (slapd: seed the simulator and ledger instead of the initial apply)]
 *
 * Writes its section of bench/RESULTS.md (`changes`, `changes-samba`; `-baseline` appended
 * for full-loop) only after a complete run. Needs slapd (or samba, as root), Redis for the daemon.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { PropagationTracker, percentile, planChanges, type ChangeDriver, type DoneChange } from './lib/change-plan.ts';
import { runCli, type CliRun } from './lib/cli-run.ts';
import { startChangeDirectory, type ChangeDirectory } from './lib/change-directory.ts';
import { writeJsonDirectory } from './lib/ldap-directory.ts';
import { describeMachine } from './lib/machine.ts';
import { cpuSeconds, rssMb } from './lib/proc-stat.ts';
import { RequestLogTail, isFullListing, isListingPage, isMembershipWrite, type LoggedRequest } from './lib/request-log.ts';
import { writeResultsSection } from './lib/results-md.ts';
import { IMAGE_ENV, buildShipped, shippedBin } from './lib/shipped-build.ts';
import { BIN, startSimulatorProcess, type SimulatorProcess } from './lib/simulator-process.ts';

const TOKEN = 'bench-token';
const TENANT = 'bench';
const REDIS_URL = 'redis://127.0.0.1:6379';

type ProcessKind = 'watch' | 'daemon' | 'full-loop';

const { values: args } = parseArgs({
  options: {
    process: { type: 'string', default: 'auto' },
    directory: { type: 'string', default: 'slapd' },
    users: { type: 'string' },
    groups: { type: 'string' },
    changes: { type: 'string', default: '300' },
    rate: { type: 'string', default: '5' },
    'idle-minutes': { type: 'string', default: '60' },
    'settle-seconds': { type: 'string', default: '180' },
    'from-sources': { type: 'boolean', default: false },
    'no-results': { type: 'boolean', default: false },
    /** slapd: seed the simulator and the ledger with what the initial full reconcile creates instead of running it. */
    seed: { type: 'boolean', default: false },
    /** Not a default setting: to see what a shorter poll gives (the aims are for the defaults). */
    'ldap-poll-seconds': { type: 'string' },
  },
});

const say = (m: string): void => void process.stderr.write(`[bench:changes] ${new Date().toISOString().slice(11, 19)} ${m}\n`);
const n0 = (x: number): string => Math.round(x).toLocaleString('en-US');
const s1 = (ms: number | undefined): string => (ms === undefined ? '–' : (ms / 1000).toFixed(1));

interface Workspace {
  dir: string;
  bin: string;
  env: NodeJS.ProcessEnv;
  config: string;
  via: string;
}

function cliHas(bin: string, command: string, env: NodeJS.ProcessEnv): boolean {
  const r = spawnSync(process.execPath, [bin, command, '--help'], { env, encoding: 'utf8' });
  return r.status === 0;
}

/** A long-running process under test, its log (stderr) kept in a file. */
interface UnderTest {
  pid: number;
  stop(): Promise<void>;
}

function startLongRunning(ws: Workspace, command: string, logFile: string): UnderTest {
  const child: ChildProcess = spawn(
    'sh',
    ['-c', `exec "$0" "$@" 2>>"${logFile}" >/dev/null`, process.execPath, ws.bin, command, '--config', ws.config],
    {
      env: ws.env,
      stdio: 'ignore',
    },
  );
  const exited = once(child, 'exit');
  return {
    pid: child.pid ?? -1,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The baseline: full reconciles back to back, each `apply` in its own process, until stopped. */
class FullLoop {
  private running = false;
  private current: Promise<CliRun> | undefined;
  private loop: Promise<void> | undefined;
  /** Every run of every loop, for the report. */
  static readonly runs: CliRun[] = [];

  private readonly ws: Workspace;

  constructor(ws: Workspace) {
    this.ws = ws;
  }

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        this.current = runCli(process.execPath, [this.ws.bin, 'apply', '--config', this.ws.config, '--json', '--yes'], {
          env: this.ws.env,
        });
        const run = await this.current;
        FullLoop.runs.push(run);
        if (run.code !== 0) say(`full-loop apply exited ${run.code}: ${run.stderrTail.slice(-600)}`);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/**
 * Waits until the process is idle: the platform saw no request for `quietMs` and the process
 * used under 5 % of a core over that time (a full read of the directory sends nothing to the
 * platform for a while), and at least `minMs` passed.
 */
async function waitIdle(
  tail: RequestLogTail,
  pid: number,
  quietMs: number,
  minMs: number,
  maxMs: number,
  logFile: string,
  sink: LoggedRequest[] = [],
): Promise<void> {
  const started = Date.now();
  let lastSeen = Date.now();
  const cpu: { at: number; s: number }[] = [];
  while (Date.now() - started < maxMs) {
    const got = tail.read();
    sink.push(...got);
    if (got.length > 0) lastSeen = Date.now();
    const s = cpuSeconds(pid, true);
    if (s === undefined) {
      let log = '';
      try {
        log = readFileSync(logFile, 'utf8').slice(-3000);
      } catch {
        // no log
      }
      throw new Error(`the process under test exited:\n${log}`);
    }
    cpu.push({ at: Date.now(), s });
    const from = cpu.find((c) => c.at >= Date.now() - quietMs);
    const busy = from ? (s - from.s) / Math.max(1, (Date.now() - from.at) / 1000) : 1;
    if (Date.now() - lastSeen >= quietMs && Date.now() - started >= minMs && busy < 0.05) return;
    await sleep(1000);
  }
  throw new Error(`the process under test did not go idle within ${maxMs / 1000} s`);
}

interface PlanResult {
  changes: number;
  blindRemovals: number;
  other: number;
  summary: Record<string, number>;
  /** The plan's non-zero summary counts, `membersAdd 2, ...`. */
  kinds: string;
  /** The plan itself (JSON) when it is not empty. */
  text: string;
}

async function fullPlan(ws: Workspace, kind: ProcessKind, blindUsers: Set<string>): Promise<PlanResult> {
  if (kind === 'daemon') {
    // `plan` reads the one-shot ledger (state.dir); the daemon keeps its own in Redis.
    const out = join(ws.dir, 'ledger-export.json');
    const exported = await runCli(process.execPath, [ws.bin, 'ledger', 'export', '--config', ws.config, '--from', 'redis', '--out', out], {
      env: ws.env,
    });
    if (exported.code !== 0) throw new Error(`ledger export exited ${exported.code}: ${exported.stderrTail.slice(-1500)}`);
    // The export wraps the ledger (kind, tenant, …); state.dir holds the ledger itself.
    const { ledger } = JSON.parse(readFileSync(out, 'utf8')) as { ledger: { users: Record<string, unknown> } };
    if (Object.keys(ledger.users).length === 0) throw new Error("the daemon's ledger is empty: a plan against it would prove nothing");
    writeFileSync(join(ws.dir, 'state', TENANT, 'ledger.json'), JSON.stringify(ledger));
  }
  const run = await runCli(process.execPath, [ws.bin, 'plan', '--config', ws.config, '--json'], { env: ws.env, keepStdout: true });
  if (run.code !== 0) throw new Error(`plan exited ${run.code}: ${run.stderrTail.slice(-1500)}`);
  const plan = JSON.parse(run.stdout) as {
    summary: Record<string, number> & { changes: number };
    users: { deactivate: { externalId: string }[]; delete: { externalId: string }[] };
  };
  const removals = [...plan.users.deactivate, ...plan.users.delete];
  const blindRemovals = removals.filter((u) => blindUsers.has(u.externalId)).length;
  const kinds = Object.entries(plan.summary)
    .filter(([k, n]) => k !== 'changes' && n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return {
    changes: plan.summary.changes,
    blindRemovals,
    other: plan.summary.changes - blindRemovals,
    summary: plan.summary,
    kinds,
    text: plan.summary.changes > 0 ? run.stdout : '',
  };
}

function writeConfig(ws: Workspace, directory: ChangeDirectory, sim: SimulatorProcess, kind: ProcessKind, keyPrefix: string): void {
  writeFileSync(join(ws.dir, 'password'), directory.password);
  const source = directory.source('password');
  const config = {
    tenant: TENANT,
    // Large groups (a tenth of all users) need pages bigger than the default response cap.
    platform: { baseUrl: sim.url, token: TOKEN, allowInsecureHttp: true, maxResponseMegabytes: 512, scim: { pageSize: 1000 } },
    state: { dir: join(ws.dir, 'state') },
    logging: { level: 'info' },
    provisioning: {
      source: {
        ...source,
        ...(args['ldap-poll-seconds'] !== undefined ? { changes: { pollSeconds: Number(args['ldap-poll-seconds']) } } : {}),
      },
    },
    ...(kind === 'daemon'
      ? { redis: { url: REDIS_URL, keyPrefix }, daemon: { http: { host: '127.0.0.1', port: 0 }, ui: { port: 0 } } }
      : {}),
  };
  writeFileSync(ws.config, JSON.stringify(config, null, 2));
}

/** What the change loop logged between two times: its batches, deferrals and full-reconcile requests. */
function changeStreamLog(path: string, from: number, to: number) {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // no log
  }
  const batches: { time: number; identities: number; reads: number; writes: number; failed: number }[] = [];
  let deferred = 0;
  let fullRequests = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let l: Record<string, unknown>;
    try {
      l = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const time = Number(l['time']);
    if (!(time >= from && time <= to)) continue;
    const msg = String(l['msg'] ?? '');
    if (msg === 'change stream: changes applied')
      batches.push({
        time,
        identities: Number(l['identities']),
        reads: Number(l['reads']),
        writes: Number(l['writes']),
        failed: Number(l['failed']),
      });
    else if (msg === 'change stream: a change is left to a full reconcile') deferred += Number(l['identities'] ?? 1);
    else if (/full reconcile requested|answered with a full read/.test(msg)) fullRequests++;
  }
  const ids = batches.map((b) => b.identities).sort((a, b) => a - b);
  const gapsS = batches
    .slice(1)
    .map((b, k) => (b.time - (batches[k] as { time: number }).time) / 1000)
    .sort((a, b) => a - b);
  return {
    batches: batches.length,
    medianIdentities: ids[Math.floor(ids.length / 2)] ?? 0,
    maxIdentities: ids[ids.length - 1] ?? 0,
    reads: batches.reduce((a, b) => a + b.reads, 0),
    writes: batches.reduce((a, b) => a + b.writes, 0),
    failed: batches.reduce((a, b) => a + b.failed, 0),
    deferred,
    fullRequests,
    gapsS,
  };
}

interface Verdict {
  name: string;
  measured: string;
  target: string;
  pass: boolean | undefined;
}

async function main(): Promise<void> {
  if (args.directory !== 'slapd' && args.directory !== 'samba') throw new Error(`--directory ${args.directory}: slapd or samba`);
  const directoryKind = args.directory;
  const users = Number(args.users ?? (directoryKind === 'samba' ? 10_000 : 100_000));
  const groups = Number(args.groups ?? (directoryKind === 'samba' ? 500 : 5_000));
  const changeCount = Number(args.changes);
  const rate = Number(args.rate);
  const idleMs = Number(args['idle-minutes']) * 60_000;
  const settleMs = Number(args['settle-seconds']) * 1000;
  const machineLine = describeMachine();
  const command = `node bench/changes.ts ${process.argv.slice(2).join(' ')}`.trim();
  const dir = mkdtempSync(join(tmpdir(), 'bench-changes-'));
  const keyPrefix = `bench-changes-${process.pid}`;

  let directory: ChangeDirectory | undefined;
  let build: string | undefined;
  let sim: SimulatorProcess | undefined;
  let underTest: UnderTest | undefined;
  let loop: FullLoop | undefined;
  let driver: ChangeDriver | undefined;
  try {
    if (!args['from-sources']) {
      say('building the shipped CLI (npm run build layout)');
      build = await buildShipped('bench-changes-build');
    }
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...(build ? IMAGE_ENV : {}) };
    const ws: Workspace = {
      dir,
      bin: build ? shippedBin(build) : BIN,
      env,
      config: join(dir, 'config.yaml'),
      via: build ? 'the compiled build in the image environment' : 'the sources (bin/scim-audit-sync.mjs)',
    };
    let kind: ProcessKind;
    if (args.process === 'auto') kind = cliHas(ws.bin, 'watch', env) ? 'watch' : 'daemon';
    else if (args.process === 'watch' || args.process === 'daemon' || args.process === 'full-loop') kind = args.process;
    else throw new Error(`--process ${args.process}: watch, daemon, full-loop or auto`);
    say(`process under test: ${kind}${kind === 'full-loop' ? ' (BASELINE: full reconciles back to back, no change path)' : ''}`);

    let t = performance.now();
    directory = await startChangeDirectory(directoryKind, users, groups);
    say(directory.description);
    const requestLog = join(dir, 'requests.jsonl');
    const seed = args.seed && directory.kind === 'slapd';
    t = performance.now();
    if (seed) {
      // The state a full reconcile leaves, written directly: the same directory as a file-source
      // document (same externalIds), the simulator seeded with what the engine would create, the ledger naming it.
      const directoryJson = join(dir, 'directory.json');
      writeJsonDirectory(directoryJson, users, groups);
      const ledgerOut = join(dir, 'state', TENANT, 'ledger.json');
      sim = await startSimulatorProcess({ token: TOKEN, maxPageSize: 1000, requestLog, seedDirectory: directoryJson, ledgerOut });
    } else sim = await startSimulatorProcess({ token: TOKEN, maxPageSize: 1000, requestLog });
    writeConfig(ws, directory, sim, kind, keyPrefix);

    let initialText: string;
    if (seed) {
      initialText = `Instead of the initial full reconcile, the simulator was seeded with what it creates and the ledger written (bench/lib/simulator-main.ts --seed-directory) in ${s1(performance.now() - t)} s; the process under test then ran its own full reconcile on start.`;
      say(initialText);
    } else {
      const initial = await runCli(process.execPath, [ws.bin, 'apply', '--config', ws.config, '--json', '--yes'], { env });
      if (initial.code !== 0) throw new Error(`initial apply exited ${initial.code}: ${initial.stderrTail.slice(-2000)}`);
      const initialMs = performance.now() - t;
      initialText = `Initial full reconcile (\`apply\`) ${s1(initialMs)} s.`;
      say(`initial full reconcile (apply): ${s1(initialMs)} s, peak RSS ${initial.peakRssMb?.toFixed(0)} MB`);
    }

    const tail = new RequestLogTail(requestLog);
    tail.skipToEnd();
    const processLog = join(dir, `${kind}.log`);
    if (kind !== 'full-loop') {
      underTest = startLongRunning(ws, kind, processLog);
      say(`${kind} started (pid ${underTest.pid}); waiting until it is idle`);
      await waitIdle(tail, underTest.pid, 15_000, 30_000, 1_200_000, processLog);
      say(`${kind} idle, RSS ${rssMb(underTest.pid)?.toFixed(0)} MB`);
    }

    // ---- change phase ----
    driver = directory.driver();
    await driver.connect();
    const planned = planChanges(changeCount, users);
    const tracker = new PropagationTracker(false);
    const phase: LoggedRequest[] = [];
    const feed = (): void => {
      const got = tail.read();
      phase.push(...got);
      tracker.feed(got);
    };
    const done: DoneChange[] = [];
    const driverFailures: string[] = [];
    const phaseStart = Date.now();
    if (kind === 'full-loop') {
      loop = new FullLoop(ws);
      loop.start();
    }
    say(`driving ${changeCount} changes at ${rate}/s`);
    const inFlight: Promise<void>[] = [];
    for (const p of planned) {
      const due = phaseStart + (p.seq * 1000) / rate;
      while (Date.now() < due) {
        feed();
        await sleep(Math.min(100, Math.max(1, due - Date.now())));
      }
      const d = driver;
      inFlight.push(
        d.apply(p).then(
          (c) => {
            done.push(c);
            // A full reconcile sees deletions: nothing is blind to the baseline.
            if (kind === 'full-loop') c.effects.push(...c.blindEffects.splice(0));
            tracker.add(c);
          },
          (e: unknown) => {
            // The directory refused or timed out: reported, not timed.
            driverFailures.push(`${p.kind} #${p.seq}: ${e instanceof Error ? e.message : String(e)}`);
          },
        ),
      );
    }
    await Promise.all(inFlight);
    if (driverFailures.length > 0) say(`${driverFailures.length} changes failed in the directory, e.g. ${driverFailures[0]}`);
    if (done.length === 0) throw new Error(`no change reached the directory: ${driverFailures.slice(0, 3).join('; ')}`);
    const lastChangeAt = Math.max(...done.map((c) => c.at));
    const driveMs = lastChangeAt - phaseStart;
    // How long the directory took to accept each change (all its LDAP operations): a stall of the
    // directory shows here, apart from the tool's propagation.
    const opMs = done.map((c) => c.at - c.startedAt).sort((a, b) => a - b);
    const dirOps = `${n0(percentile(opMs, 50) ?? 0)} ms median, p99 ${n0(percentile(opMs, 99) ?? 0)} ms, max ${n0(opMs[opMs.length - 1] ?? 0)} ms`;
    say(
      `changes made in ${s1(driveMs)} s (${(changeCount / (driveMs / 1000)).toFixed(2)}/s), the directory's time per change ${dirOps}; waiting for propagation`,
    );
    while (tracker.outstanding > 0 && Date.now() - lastChangeAt < settleMs) {
      feed();
      await sleep(250);
    }
    if (loop) await loop.stop();
    await sleep(5000);
    feed();
    const phaseEnd = Date.now();
    const missing = tracker.missing();
    const stream = kind === 'full-loop' ? undefined : changeStreamLog(processLog, phaseStart, phaseEnd);
    say(`propagated ${tracker.done.size} of ${done.filter((c) => c.effects.length > 0).length}; ${missing.length} missing`);

    // ---- counts of the change phase ----
    const scim = phase.filter((r) => r.res !== 'other');
    const membership = scim.filter(isMembershipWrite);
    const nonMembership = scim.filter((r) => !isMembershipWrite(r));
    const listingsUsers = scim.filter((r) => isFullListing(r, 'Users'));
    const listingsGroups = scim.filter((r) => isFullListing(r, 'Groups'));
    const listingPages = scim.filter((r) => isListingPage(r, 'Users') || isListingPage(r, 'Groups'));
    const changedUsers = new Set(done.filter((c) => c.effects.length > 0).map((c) => c.user));
    const perUser = nonMembership.length / Math.max(1, changedUsers.size);
    const userRequests = nonMembership.filter((r) => r.res === 'Users').length;
    const groupReads = nonMembership.filter((r) => r.res === 'Groups').length;
    const byKind = new Map<string, number>();
    for (const r of scim)
      byKind.set(
        `${r.method} ${r.res}${r.item ? '/{id}' : ''}${r.filter !== undefined ? '?filter' : ''}`,
        (byKind.get(`${r.method} ${r.res}${r.item ? '/{id}' : ''}${r.filter !== undefined ? '?filter' : ''}`) ?? 0) + 1,
      );

    const latencies = done
      .filter((c) => tracker.done.has(c.seq))
      .map((c) => Math.max(0, (tracker.done.get(c.seq) as number) - c.at))
      .sort((a, b) => a - b);
    const expected = done.filter((c) => c.effects.length > 0).length;
    // A change that never propagated counts as slower than anything measured.
    const withMissing = [...latencies, ...missing.map(() => Number.POSITIVE_INFINITY)];
    const p50 = percentile(withMissing, 50);
    const p95 = percentile(withMissing, 95);
    const p99 = percentile(withMissing, 99);
    const kindRows = [...new Set(done.map((c) => c.kind))].map((k) => {
      const ls = done
        .filter((c) => c.kind === k && tracker.done.has(c.seq))
        .map((c) => Math.max(0, (tracker.done.get(c.seq) as number) - c.at))
        .sort((a, b) => a - b);
      const all = done.filter((c) => c.kind === k).length;
      const miss = missing.filter((m) => m.change.kind === k).length;
      return `| ${k} | ${all} | ${ls.length} | ${miss} | ${s1(percentile(ls, 50))} | ${s1(percentile(ls, 95))} | ${s1(ls[ls.length - 1])} |`;
    });

    // ---- the next full plan ----
    const blindUsers = new Set(done.filter((c) => c.blindEffects.length > 0).map((c) => c.user));
    const plan1 = await fullPlan(ws, kind, blindUsers);
    say(
      `full plan after the changes: ${plan1.changes} changes (${plan1.blindRemovals} deprovisionings of deleted leavers, ${plan1.other} other)${plan1.kinds ? `: ${plan1.kinds}` : ''}`,
    );
    if (plan1.text) say(`that plan: ${plan1.text.slice(0, 4000)}`);
    // What the change mechanism is said not to see may still arrive through it (e.g. a reader
    // that checks the members its groups lost): timed from the change phase's requests first.
    const blind = new PropagationTracker(true);
    for (const c of done) blind.add(c);
    blind.feed(phase);
    const blindLatency = (): number[] =>
      done.filter((c) => blind.done.has(c.seq)).map((c) => Math.max(0, (blind.done.get(c.seq) as number) - c.at));
    const blindViaChanges = blindLatency();
    let blindLatencies = blindViaChanges;
    let plan2 = plan1;
    if (plan1.changes > 0) {
      const applyStart = Date.now();
      if (kind === 'daemon' && underTest) {
        // The daemon's own full reconcile, as its schedule would run it.
        const trigger = await runCli(process.execPath, [ws.bin, 'trigger', 'reconcile', '--config', ws.config], { env });
        if (trigger.code !== 0) throw new Error(`trigger reconcile exited ${trigger.code}: ${trigger.stderrTail.slice(-1500)}`);
        const seen: LoggedRequest[] = [];
        await waitIdle(tail, underTest.pid, 15_000, 20_000, 1_200_000, processLog, seen);
        blind.feed(seen);
        say(`full reconcile (daemon, triggered) after the changes: ${s1(Date.now() - applyStart)} s`);
      } else {
        const repair = await runCli(process.execPath, [ws.bin, 'apply', '--config', ws.config, '--json', '--yes'], { env });
        say(`full reconcile (apply) after the changes: exit ${repair.code}, ${s1(Date.now() - applyStart)} s`);
      }
      await sleep(1000);
      blind.feed(tail.read());
      blindLatencies = blindLatency();
      plan2 = await fullPlan(ws, kind, blindUsers);
      say(`full plan after that full reconcile: ${plan2.changes} changes`);
    }

    // ---- idle ----
    let idle:
      | { cpuPct: number; firstMb?: number; lastMb?: number; requests: number; listings: number; minutes: number; serverPct?: number }
      | undefined;
    if (idleMs > 0) {
      say(`idle phase: ${idleMs / 60_000} min`);
      tail.read();
      const serverPid = directory.serverPid();
      if (kind === 'full-loop') {
        loop = new FullLoop(ws);
        loop.start();
      }
      const cpuNow = (): number =>
        underTest ? (cpuSeconds(underTest.pid, true) ?? 0) : (cpuSeconds('self', true) ?? 0) - (cpuSeconds('self') ?? 0);
      const started = Date.now();
      const cpu0 = cpuNow();
      const server0 = serverPid !== undefined ? cpuSeconds(serverPid) : undefined;
      const rss: number[] = [];
      const idleRequests: LoggedRequest[] = [];
      while (Date.now() - started < idleMs) {
        await sleep(Math.min(10_000, idleMs));
        if (underTest) {
          const mb = rssMb(underTest.pid);
          if (mb === undefined) throw new Error(`${kind} exited during the idle phase: ${readFileSync(processLog, 'utf8').slice(-2000)}`);
          rss.push(mb);
        }
        idleRequests.push(...tail.read());
      }
      if (loop) await loop.stop();
      const seconds = (Date.now() - started) / 1000;
      const q = Math.max(1, Math.floor(rss.length / 4));
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      idle = {
        cpuPct: ((cpuNow() - cpu0) / seconds) * 100,
        ...(rss.length > 0 ? { firstMb: mean(rss.slice(0, q)), lastMb: mean(rss.slice(-q)) } : {}),
        requests: idleRequests.filter((r) => r.res !== 'other').length,
        listings: idleRequests.filter((r) => isFullListing(r, 'Users')).length,
        minutes: seconds / 60,
        ...(serverPid !== undefined && server0 !== undefined
          ? { serverPct: (((cpuSeconds(serverPid) ?? server0) - server0) / seconds) * 100 }
          : {}),
      };
      say(
        `idle: ${idle.cpuPct.toFixed(2)} % of one core${idle.firstMb !== undefined ? `, RSS ${idle.firstMb.toFixed(0)} → ${idle.lastMb?.toFixed(0)} MB` : ''}`,
      );
    }

    // ---- verdicts ----
    const fmtS = (ms: number | undefined): string =>
      ms === undefined ? '–' : Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : 'not propagated';
    const verdicts: Verdict[] = [
      { name: 'propagation p50', measured: fmtS(p50), target: '(reported)', pass: undefined },
      { name: 'propagation p95', measured: fmtS(p95), target: '≤ 5 s', pass: p95 !== undefined && p95 <= 5000 },
      { name: 'propagation p99', measured: fmtS(p99), target: '≤ 10 s', pass: p99 !== undefined && p99 <= 10_000 },
      {
        name: kind === 'full-loop' ? 'changes propagated (baseline: by the full reconciles)' : 'changes propagated through the change path',
        measured: `${latencies.length} of ${expected}`,
        target: `${expected} of ${expected}`,
        pass: latencies.length === expected,
      },
      {
        name: 'platform requests per changed user (membership writes apart)',
        measured: `${perUser.toFixed(2)} (${n0(nonMembership.length)} requests for ${changedUsers.size} users: /Users ${n0(userRequests)} = ${(userRequests / Math.max(1, changedUsers.size)).toFixed(2)} a user, group reads ${n0(groupReads)}, other ${n0(nonMembership.length - userRequests - groupReads)}; + ${n0(membership.length)} membership writes)`,
        target: '≤ 5',
        pass: perUser <= 5,
      },
      {
        name: 'full listings during the change phase (GET /Users without filter)',
        measured: `${listingsUsers.length} (of groups: ${listingsGroups.length}; ${n0(listingPages.length)} listing pages in all)`,
        target: '0',
        pass: listingsUsers.length === 0,
      },
      {
        name: directory.deletesBlind
          ? 'next full plan after the changes (excluding deleted leavers, a documented blind spot on OpenLDAP)'
          : 'next full plan after the changes',
        measured: `${plan1.other} changes${plan1.kinds ? ` (${plan1.kinds})` : ''} (+ ${plan1.blindRemovals} deprovisionings of the ${blindUsers.size} deleted leavers)`,
        target: '0',
        pass: plan1.other === 0,
      },
      {
        name: 'next full plan after one full reconcile',
        measured: `${plan2.changes} changes`,
        target: '0',
        pass: plan2.changes === 0,
      },
      ...(idle
        ? [
            {
              name: `idle CPU of the ${kind === 'full-loop' ? 'full-reconcile loop' : `${kind} process`} (${idle.minutes.toFixed(1)} min)`,
              measured: `${idle.cpuPct.toFixed(2)} % of one core`,
              target: '≤ 2 %',
              pass: idle.cpuPct <= 2,
            },
            {
              name: 'idle memory growth (mean RSS, last quarter vs first quarter)',
              measured:
                idle.firstMb !== undefined && idle.lastMb !== undefined
                  ? `${idle.firstMb.toFixed(0)} → ${idle.lastMb.toFixed(0)} MB (${(((idle.lastMb - idle.firstMb) / idle.firstMb) * 100).toFixed(1)} %)`
                  : 'n/a (a process per run)',
              target: 'no growth (≤ +5 %)',
              pass: idle.firstMb !== undefined && idle.lastMb !== undefined ? idle.lastMb <= idle.firstMb * 1.05 : undefined,
            },
          ]
        : []),
    ];
    if (idle && Number(args['idle-minutes']) < 60)
      verdicts.push({ name: 'idle phase length', measured: `${idle.minutes.toFixed(1)} min`, target: '60 min', pass: false });
    const mark = (v: boolean | undefined): string => (v === undefined ? '' : v ? 'PASS' : '**MISS**');

    const lines = [
      `## Change-driven sync${directory.kind === 'samba' ? ', Samba AD' : ''}${kind === 'full-loop' ? ' — BASELINE: full reconciles back to back' : ''} (\`npm run bench:changes${directory.kind === 'samba' || kind === 'full-loop' ? ` --${directory.kind === 'samba' ? ' --directory samba' : ''}${kind === 'full-loop' ? ' --process full-loop' : ''}` : ''}\`)`,
      '',
      `${machineLine}. Command: \`${command}\`.`,
      '',
      `${directory.description}; the platform simulator in its own process, logging every SCIM request it acknowledges; the CLI run from ${ws.via}. ${initialText} Process under test: ${
        kind === 'full-loop'
          ? '**baseline** — no change path: `apply` (a full reconcile: read the whole directory, list the whole platform, plan, write) in a new process as soon as the previous one ended'
          : `\`scim-audit-sync ${kind} --config F\`${kind === 'daemon' ? ' (Redis)' : ' (foreground, no Redis)'}, default change settings, started after the initial reconcile and measured once idle`
      }. ${changeCount} changes at ${rate}/s through LDAP add/modify/modrdn/delete as the directory administrator (made in ${s1(driveMs)} s; the directory's time per change ${dirOps}). Config: \`scim.pageSize: 1000\`, \`maxResponseMegabytes: 512\`, LDAP pages of 1,000, ${directory.kind === 'slapd' ? '`disabled: { attribute: employeeType, values: [terminated] }`' : 'the active-directory preset (disabled: userAccountControl)'}${args['ldap-poll-seconds'] !== undefined ? `, **not default:** \`changes.pollSeconds: ${args['ldap-poll-seconds']}\`` : ', change settings at their defaults'}.`,
      '',
      '| aim | measured | target | |',
      '|---|---:|---:|:---:|',
      ...verdicts.map((v) => `| ${v.name} | ${v.measured} | ${v.target} | ${mark(v.pass)} |`),
      '',
      '| change | made | propagated | missing | p50 (s) | p95 (s) | max (s) |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...kindRows,
      '',
      `- Propagation: from the LDAP response to the last operation of a change to the simulator's response to the last platform write the change needs (a joiner: its POST /Users and the membership PATCH of its group; a leaver disabled: its deactivation; a rename or an attribute change: a write of that user; a group move: the member removal and addition). A change not propagated within ${s1(settleMs)} s of the last change counts as slower than every measured one.`,
      kind !== 'full-loop' && !directory.deletesBlind
        ? '- Deleted leavers: Active Directory keeps a tombstone, which the change reader sees through the Show Deleted control, so their deprovisioning is timed like every other change (AD removes the group links itself).'
        : kind === 'full-loop'
          ? '- Deleted leavers: a full reconcile sees a deleted entry (absent from the read), so for the baseline their deprovisioning and group removals are both timed like every other change.'
          : `- Deleted leavers: on OpenLDAP a deleted entry leaves no trace a change reader can see, so the user's deprovisioning is left to the full reconcile (a documented blind spot); their removals from their groups (the groups changed, as the refint overlay rewrites them) are timed through the change path. Of the ${blindUsers.size} deleted leavers, ${blindViaChanges.length} were deprovisioned during the change phase all the same${blindViaChanges.length > 0 ? ` (at most ${s1(Math.max(...blindViaChanges))} s after the deletion)` : ''}, ${blindLatencies.length - blindViaChanges.length} by the full reconcile the bench ran after it, ${blindUsers.size - blindLatencies.length} not at all.`,
      `- Requests per changed user: every SCIM request from the first change until ${s1(phaseEnd - lastChangeAt)} s after the last (reads included), except group PATCH/PUT, over the ${changedUsers.size} users whose change the change path should carry. By type: ${[
        ...byKind.entries(),
      ]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${n0(v)}`)
        .join(', ')}.`,
      ...(idle
        ? [
            `- Idle: CPU of the process under test (utime + stime, its exited children included) over ${idle.minutes.toFixed(1)} min after the change phase; RSS sampled every 10 s. Platform requests while idle: ${idle.requests} (full listings: ${idle.listings})${idle.serverPct !== undefined ? `; the directory server's CPU meanwhile: ${idle.serverPct.toFixed(2)} % of one core` : ''}.`,
          ]
        : []),
      ...(kind === 'full-loop'
        ? [
            `- Baseline full reconciles in the change phase and idle: each \`apply\` took ${FullLoop.runs.map((r) => s1(r.wallMs)).join(', ')} s.`,
          ]
        : []),
      ...(driverFailures.length > 0
        ? [`- **${driverFailures.length} changes failed in the directory** (not timed), e.g. ${driverFailures.slice(0, 3).join('; ')}.`]
        : []),
      ...(stream
        ? [
            `- The process's own log in the change phase: ${stream.batches} batches applied (identities per batch: median ${stream.medianIdentities}, max ${stream.maxIdentities}; ${n0(stream.reads)} reads and ${n0(stream.writes)} writes in all, ${stream.failed} failed), ${stream.deferred} changes left to a full reconcile, ${stream.fullRequests} full reconciles requested${stream.gapsS.length > 0 ? `; seconds between batch ends: median ${stream.gapsS[Math.floor(stream.gapsS.length / 2)]?.toFixed(1)}, max ${stream.gapsS[stream.gapsS.length - 1]?.toFixed(1)}` : ''}.`,
          ]
        : []),
      ...(missing.length > 0
        ? [
            `- Not propagated (first 5): ${missing
              .slice(0, 5)
              .map((m) => `${m.change.kind} ${m.change.user} missing ${m.open.map((e) => e.type).join('+')}`)
              .join('; ')}.`,
          ]
        : []),
    ];
    const section = lines.join('\n');
    process.stdout.write(`${section}\n`);
    if (!args['no-results'])
      await writeResultsSection(`changes${directory.kind === 'samba' ? '-samba' : ''}${kind === 'full-loop' ? '-baseline' : ''}`, section);
  } finally {
    await driver?.close();
    await loop?.stop();
    await underTest?.stop();
    await sim?.stop();
    await directory?.stop();
    if (args.process === 'daemon') {
      const redis = new Redis(REDIS_URL);
      const keys = [...(await redis.keys(`${keyPrefix}*`).catch(() => [])), ...(await redis.keys(`{${keyPrefix}}*`).catch(() => []))];
      if (keys.length > 0) await redis.del(...keys).catch(() => undefined);
      redis.disconnect();
    }
    rmSync(dir, { recursive: true, force: true });
    if (build !== undefined) rmSync(build, { recursive: true, force: true });
  }
}

await main();
