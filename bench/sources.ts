/**
 * Source read cost, in one run:
 * 1. Side by side: the same directory (default 100,000 users, 2,000 groups, every user in
 *    ≥2 groups, 5 groups with 5,000+ members) read by the file source, the LDAP source
 *    (private slapd, paged, 1,000-entry size limit) and the google-workspace source (the
 *    real Google clients against the Directory API simulator: 500 users and 200 members
 *    per page), the entra-id source (the real @azure/identity credential and Graph
 *    over HTTPS against the Entra simulator: 999 users and members per page) and the okta
 *    source (the Okta SDK against the Okta simulator: 200 users and 1,000 members per page).
 * 2. The file source at scale: the bench:reconcile directory (bench/lib/directory.ts:
 *    100,000 users, 5,000 groups of 40 members; 1,000,000 + 50,000 with
 *    BENCH_SOURCES_1M=1) read streamed against the read before streaming (JSON.parse of
 *    the whole text, bench/lib/read-source.ts --whole-json), and a YAML file of 10,000
 *    users (parsed whole) for scale.
 * Each read runs in its own child process, so its time and peak RSS are its own; the
 * servers run elsewhere.
 *
 *   node bench/sources.ts [--users 100000] [--groups 2000] [--file-only]   (npm run bench:sources)
 *
 * Needs slapd + ldap-utils for the LDAP row. Writes a section of bench/RESULTS.md.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { LdifEntry } from '../test/helpers/ldif.ts';
import { generateDirectory, writeDirectory } from './lib/directory.ts';
import { runMeasured } from './lib/peak-rss.ts';
import { writeResultsSection } from './lib/results-md.ts';

const HERE = import.meta.dirname;
const DOMAIN = 'example.org';

interface ChildResult {
  label: string;
  readMs: number;
  /** User + system CPU time of the reading process during the read. */
  cpuMs: number;
  users: number;
  groups: number;
  memberships: number;
  peakRssMB: number;
  baseRssMB: number;
  requests?: number;
}

async function child(label: string, configPath: string): Promise<void> {
  const { loadConfig } = await import('../src/config/load.ts');
  const { createLogger } = await import('../src/observability/logger.ts');
  const { createSource, sourceContext } = await import('../src/sources/registry.ts');
  const loaded = await loadConfig(configPath);
  if (!loaded.config.provisioning) throw new Error(`${configPath} has no provisioning section`);
  const source = await createSource(loaded.config.provisioning.source, sourceContext(loaded, createLogger({ level: 'warn' })));
  const baseRssMB = process.memoryUsage().rss / 1024 / 1024;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const state = await source.read();
  const readMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await source.close?.();
  const result: ChildResult = {
    label,
    readMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    users: state.users.length,
    groups: state.groups.length,
    memberships: state.groups.reduce((n, g) => n + g.members.length, 0),
    // maxRSS is in kilobytes.
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    baseRssMB,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Every user in two groups; a few large groups on top (the LDAP benchmark's shape). */
function groupMembers(g: number, users: number, groups: number): number[] {
  const out: number[] = [];
  for (let i = g; i < users; i += groups) out.push(i);
  for (let i = (g * 7) % groups; i < users; i += groups) if (i !== g) out.push(i);
  if (g < 5) for (let i = 0; i < users; i += 10) out.push(i);
  return [...new Set(out)];
}

function* ldapEntries(users: number, groups: number): Generator<LdifEntry> {
  const suffix = 'dc=example,dc=org';
  yield { dn: `ou=people,${suffix}`, attrs: { objectClass: 'organizationalUnit', ou: 'people' } };
  yield { dn: `ou=groups,${suffix}`, attrs: { objectClass: 'organizationalUnit', ou: 'groups' } };
  for (let i = 0; i < users; i++) {
    const uid = `user${i}`;
    yield {
      dn: `uid=${uid},ou=people,${suffix}`,
      attrs: {
        objectClass: 'inetOrgPerson',
        uid,
        cn: `User ${i}`,
        givenName: 'User',
        sn: `N${i}`,
        mail: `${uid}@${DOMAIN}`,
        departmentNumber: `d${i % 50}`,
      },
    };
  }
  for (let g = 0; g < groups; g++) {
    yield {
      dn: `cn=group${g},ou=groups,${suffix}`,
      attrs: {
        objectClass: 'groupOfNames',
        cn: `group${g}`,
        member: groupMembers(g, users, groups).map((i) => `uid=user${i},ou=people,${suffix}`),
      },
    };
  }
}

function fileDirectory(users: number, groups: number): string {
  const u = Array.from({ length: users }, (_, i) => ({
    externalId: `user${i}`,
    userName: `user${i}@${DOMAIN}`,
    givenName: 'User',
    familyName: `N${i}`,
    displayName: `User ${i}`,
    emails: [`user${i}@${DOMAIN}`],
    attributes: { department: `d${i % 50}` },
  }));
  const gs = Array.from({ length: groups }, (_, g) => ({
    externalId: `group${g}`,
    displayName: `group${g}`,
    members: groupMembers(g, users, groups).map((i) => `user${i}`),
  }));
  return JSON.stringify({ users: u, groups: gs });
}

function runChild(label: string, config: string): Promise<ChildResult> {
  return new Promise((res, rej) => {
    execFile(
      process.execPath,
      [join(HERE, 'sources.ts'), '--child', label, '--config', config],
      { maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return rej(new Error(`${label} run failed: ${stderr || err.message}`));
        res(JSON.parse(stdout.trim().split('\n').pop() ?? '') as ChildResult);
      },
    );
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: 'string' },
      config: { type: 'string' },
      users: { type: 'string', default: '100000' },
      groups: { type: 'string', default: '2000' },
      'file-only': { type: 'boolean', default: false },
    },
  });
  if (values.child) return child(values.child, values.config as string);
  if (values['file-only']) {
    const section = await fileAtScale();
    process.stdout.write(`${section}\n`);
    return;
  }

  const users = Number(values.users);
  const groups = Number(values.groups);
  const { startSlapd, slapdAvailable } = await import('../test/helpers/slapd.ts');
  const { generateServiceAccount, startGoogleSimulator } = await import('../src/simulator/google/index.ts');
  const { SCOPES } = await import('../src/sources/google/schema.ts');
  const { startOktaSimulator } = await import('../src/simulator/okta/index.ts');
  const dir = mkdtempSync(join(tmpdir(), 'bench-sources-'));
  const sa = generateServiceAccount({ delegatedScopes: Object.values(SCOPES) });
  let googleRequests = 0;
  const gsim = await startGoogleSimulator({
    domain: DOMAIN,
    serviceAccounts: [sa.account],
    recordRequests: false,
    onRequest: () => void googleRequests++,
  });
  const ws = gsim.workspace;
  ws.addUser({ primaryEmail: `admin@${DOMAIN}`, givenName: 'Workspace', familyName: 'Admin', isAdmin: true });
  for (let i = 0; i < users; i++)
    ws.addUser({
      primaryEmail: `user${i}@${DOMAIN}`,
      givenName: 'User',
      familyName: `N${i}`,
      organizations: [{ department: `d${i % 50}`, primary: true }],
    });
  for (let g = 0; g < groups; g++)
    ws.addGroup({
      email: `group${g}@${DOMAIN}`,
      name: `group${g}`,
      members: groupMembers(g, users, groups).map((i) => ({ key: `user${i}@${DOMAIN}` })),
    });
  const entra = await startEntraBench(users, groups);
  // Okta: the same users and groups; rate limits out of the way (this measures the read, not Okta's quota).
  const oktaToken = 'bench-okta-token';
  let oktaRequests = 0;
  const osim = await startOktaSimulator({
    apiTokens: [{ token: oktaToken, adminRole: 'READ_ONLY_ADMIN' }],
    rateLimits: { users: 1e9, groups: 1e9, 'group-users': 1e9 },
    recordRequests: true,
  });
  const oktaIds: string[] = [];
  for (let i = 0; i < users; i++)
    oktaIds.push(
      osim.org.addUser({
        login: `user${i}@${DOMAIN}`,
        email: `user${i}@${DOMAIN}`,
        firstName: 'User',
        lastName: `N${i}`,
        department: `d${i % 50}`,
      }).id,
    );
  for (let g = 0; g < groups; g++) {
    const og = osim.org.addGroup(`group${g}`);
    osim.org.setMembers(
      og.id,
      groupMembers(g, users, groups).map((i) => oktaIds[i] as string),
    );
  }
  const ldapOk = slapdAvailable();
  const sl = ldapOk ? await startSlapd({ entries: ldapEntries(users, groups), sizeLimit: 1000 }) : undefined;
  try {
    writeFileSync(join(dir, 'key.json'), sa.keyFileJson, { mode: 0o600 });
    writeFileSync(join(dir, 'directory.json'), fileDirectory(users, groups));
    const common = {
      tenant: 'bench',
      platform: { baseUrl: 'http://127.0.0.1:1', token: 'unused', allowInsecureHttp: true },
      state: { dir: join(dir, 'state') },
    };
    const write = (name: string, source: Record<string, unknown>): string => {
      writeFileSync(join(dir, name), JSON.stringify({ ...common, provisioning: { source } }));
      return join(dir, name);
    };
    const rows: ChildResult[] = [];
    rows.push(await runChild('file', write('file.yaml', { type: 'file', path: 'directory.json' })));
    if (sl) {
      writeFileSync(join(dir, 'password'), sl.readerPassword);
      rows.push(
        await runChild(
          'ldap',
          write('ldap.yaml', {
            type: 'ldap',
            url: sl.url,
            allowInsecure: true,
            bindDn: sl.readerDn,
            bindPasswordFile: 'password',
            pageSize: 1000,
            users: { baseDn: 'ou=people,dc=example,dc=org' },
            groups: { baseDn: 'ou=groups,dc=example,dc=org' },
          }),
        ),
      );
    }
    const google = await runChild(
      'google-workspace',
      write('google.yaml', {
        type: 'google-workspace',
        serviceAccountKeyFile: 'key.json',
        subject: `admin@${DOMAIN}`,
        rootUrl: gsim.rootUrl,
        tokenUrl: gsim.tokenUrl,
        allowInsecureHttp: true,
      }),
    );
    rows.push(google);
    rows.push(await runChild('entra-id', write('entra.yaml', entra.source(dir))));
    writeFileSync(join(dir, 'okta-token'), oktaToken, { mode: 0o600 });
    osim.requests.length = 0;
    rows.push(
      await runChild('okta', write('okta.yaml', { type: 'okta', orgUrl: osim.url, apiTokenFile: 'okta-token', allowInsecureHttp: true })),
    );
    oktaRequests = osim.requests.length;
    const file = rows[0] as ChildResult;
    const row = (r: ChildResult): string =>
      `| ${r.label} | ${r.users} | ${r.groups} | ${r.memberships} | ${(r.readMs / 1000).toFixed(2)} | ×${(r.readMs / file.readMs).toFixed(2)} | ${(r.cpuMs / 1000).toFixed(2)} | ${r.peakRssMB.toFixed(0)} | ×${(r.peakRssMB / file.peakRssMB).toFixed(2)} |`;
    const scale = await fileAtScale();
    const section = [
      '## Source reads side by side (`npm run bench:sources`)',
      '',
      `${users} users, ${groups} groups (every user in ≥2 groups, 5 groups with ${Math.ceil(users / 10)}+ members), the same directory in each source; the Google workspace has one more user (the admin the service account acts as). Each read in its own child process (Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}); slapd and the Google simulator run outside it. LDAP: pages of 1,000 under a 1,000-entry size limit. Google: the real google-auth-library + @googleapis/admin clients, users 500 per page, members 200 per page, 4 member lists in parallel: ${googleRequests} HTTP requests. Entra ID: the real @azure/identity ClientSecretCredential and Graph requests over HTTPS (the simulator), users and members 999 per page, 4 member lists in parallel: ${entra.requests()} HTTP requests. Okta: the real @okta/okta-sdk-nodejs client, users 200 per page, members 1,000 per page, 4 member lists in parallel, rate limits lifted: ${oktaRequests} HTTP requests.${sl ? '' : ' (slapd not installed: no LDAP row.)'}`,
      '',
      '| source | users | groups | memberships | read (s) | read ÷ file | CPU of the reader (s) | peak RSS (MB) | RSS ÷ file |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows.map(row),
      '',
      `Read time is wall time and includes waiting for the server (slapd, the simulator) on a shared machine (1-minute load average at the end: ${loadavg()[0]?.toFixed(1)}); the CPU column is the reading process alone. Against Google itself each request waits for the network (typically 100-300 ms), so a real read is bounded by round trips and by \`concurrency\` for member lists, not by this CPU figure.`,
      '',
      scale,
    ].join('\n');
    process.stdout.write(`${section}\n`);
    await writeResultsSection('sources', section);
  } finally {
    await gsim.close();
    await entra.close();
    await osim.close();
    await sl?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same directory in the Entra simulator (HTTPS, a self-signed certificate), and a source config for it. */
async function startEntraBench(users: number, groups: number) {
  const sim = await import('../src/simulator/entra/index.ts');
  const secret = sim.generateClientSecret();
  const clientId = '0f1e2d3c-4b5a-4697-8877-665544332211';
  const tls = sim.selfSignedServerCertificate();
  let requests = 0;
  const server = await sim.startEntraSimulator({
    domain: DOMAIN,
    tls,
    apps: [{ clientId, secrets: [{ value: secret }], permissions: ['User.Read.All', 'GroupMember.Read.All'], adminConsent: true }],
    recordRequests: false,
    onRequest: () => void requests++,
  });
  const ids: string[] = [];
  for (let i = 0; i < users; i++)
    ids.push(
      server.directory.addUser({ userPrincipalName: `user${i}@${DOMAIN}`, givenName: 'User', surname: `N${i}`, department: `d${i % 50}` })
        .id,
    );
  for (let g = 0; g < groups; g++)
    server.directory.addGroup({
      displayName: `group${g}`,
      members: groupMembers(g, users, groups).map((i) => ({ type: 'user' as const, id: ids[i] as string })),
    });
  return {
    requests: () => requests,
    source: (dir: string): Record<string, unknown> => {
      writeFileSync(join(dir, 'entra-secret'), secret, { mode: 0o600 });
      writeFileSync(join(dir, 'entra-ca.pem'), tls.cert);
      return {
        type: 'entra-id',
        tenantId: server.tenantId,
        clientId,
        credential: { type: 'clientSecret', clientSecretFile: 'entra-secret' },
        authorityHost: server.url,
        graphUrl: server.url,
        caFile: 'entra-ca.pem',
        users: { select: ['department'] },
      };
    },
    close: () => server.close(),
  };
}

interface ReadSourceResult {
  users: number;
  groups: number;
  memberships: number;
  rejected: number;
  readMs: number;
  cpuMs: number;
  baseRssMb: number;
  liveHeapMb: number;
  oldSpaceMb: number;
  youngGenMb: number;
}

/** One read by bench/lib/read-source.ts in its own process: its VmHWM and what it reports. */
async function readSource(
  config: string,
  whole: boolean,
  nodeFlags: string[] = [],
): Promise<ReadSourceResult & { peakRssMb: number; wallMs: number }> {
  const args = [...nodeFlags, '--expose-gc', join(HERE, 'lib', 'read-source.ts'), config, ...(whole ? ['--whole-json'] : [])];
  const run = await runMeasured(process.execPath, args, { keepStdout: true, sampleMs: 50 });
  if (run.code !== 0) throw new Error(`read-source ${config}${whole ? ' --whole-json' : ''}: ${run.stderr.slice(0, 2000)}`);
  const r = JSON.parse(run.stdout.trim().split('\n').pop() ?? '') as ReadSourceResult;
  return { ...r, peakRssMb: run.peakRssMb ?? Number.NaN, wallMs: run.wallMs };
}

/** The file source at the sizes of bench:reconcile, streamed against the whole-text parse; YAML for scale. */
async function fileAtScale(): Promise<string> {
  const sizes: [users: number, groups: number][] = [[100_000, 5_000]];
  if (process.env.BENCH_SOURCES_1M === '1') sizes.push([1_000_000, 50_000]);
  const dir = mkdtempSync(join(tmpdir(), 'bench-file-source-'));
  const n0 = (n: number): string => n.toLocaleString('en-US');
  const rows: string[] = [];
  const notes: string[] = [];
  let firstStreamed: (ReadSourceResult & { peakRssMb: number }) | undefined;
  const row = (what: string, mb: number, r: Awaited<ReturnType<typeof readSource>>, ratio = ''): string =>
    `| ${what} | ${mb.toFixed(1)} | ${n0(r.users)} | ${n0(r.groups)} | ${n0(r.memberships)} | ${(r.readMs / 1000).toFixed(2)} | ${(r.cpuMs / 1000).toFixed(2)} | ${r.peakRssMb.toFixed(0)} | ${r.baseRssMb.toFixed(0)} | ${(r.peakRssMb - r.baseRssMb).toFixed(0)} | ${r.liveHeapMb.toFixed(0)} | ${r.youngGenMb.toFixed(0)} | ${ratio} |`;
  try {
    const config = (name: string, file: string): string => {
      const path = join(dir, name);
      writeFileSync(
        path,
        JSON.stringify({
          tenant: 'bench',
          platform: { baseUrl: 'http://127.0.0.1:1', token: 'unused', allowInsecureHttp: true },
          state: { dir: join(dir, 'state') },
          provisioning: { source: { type: 'file', path: file } },
        }),
      );
      return path;
    };
    for (const [users, groups] of sizes) {
      const file = `directory-${users}.json`;
      await writeDirectory(join(dir, file), generateDirectory(users, groups, 40));
      const mb = statSync(join(dir, file)).size / 1024 / 1024;
      const cfg = config(`file-${users}.yaml`, file);
      const whole = await readSource(cfg, true);
      const streamed = await readSource(cfg, false);
      if (streamed.users !== whole.users || streamed.memberships !== whole.memberships || streamed.rejected !== whole.rejected)
        throw new Error(`the streamed read differs from the whole-text parse: ${JSON.stringify({ streamed, whole })}`);
      firstStreamed ??= streamed;
      rows.push(row(`${n0(users)} users, JSON parsed whole (the read before)`, mb, whole));
      rows.push(
        row(
          `${n0(users)} users, JSON streamed`,
          mb,
          streamed,
          `time ×${(streamed.readMs / whole.readMs).toFixed(2)}, CPU ×${(streamed.cpuMs / whole.cpuMs).toFixed(2)}, peak ×${(streamed.peakRssMb / whole.peakRssMb).toFixed(2)}`,
        ),
      );
      rmSync(join(dir, file));
    }
    const yamlUsers = 10_000;
    writeFileSync(join(dir, 'directory.yaml'), stringify(generateDirectory(yamlUsers, 500, 40)));
    const yaml = await readSource(config('yaml.yaml', 'directory.yaml'), false);
    rows.push(row(`${n0(yamlUsers)} users, YAML (parsed whole)`, statSync(join(dir, 'directory.yaml')).size / 1024 / 1024, yaml));
    const perUser = (r: ReadSourceResult): number => r.cpuMs / r.users;
    const json = firstStreamed as ReadSourceResult & { peakRssMb: number };
    notes.push(
      `YAML: the \`yaml\` package yields a document only once it is complete (its Parser emits one CST token per document; Composer builds the whole Document from it), so a one-document directory cannot be read entry by entry with it. YAML is parsed whole, then its entries are validated one by one: ${perUser(yaml).toFixed(3)} ms CPU and ${((yaml.peakRssMb - yaml.baseRssMb) / (yamlUsers / 1000)).toFixed(1)} MB of peak RSS per 1,000 users here, against ${perUser(json).toFixed(3)} ms and ${((json.peakRssMb - json.baseRssMb) / (json.users / 1000)).toFixed(1)} MB for the streamed JSON: large directories belong in JSON (or CSV).`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    '### The file source at scale',
    '',
    `The bench:reconcile directory (bench/lib/directory.ts: realistic users, groups of 40 random members), each read in its own process (bench/lib/read-source.ts, \`--expose-gc\` to report the live heap), peak RSS = VmHWM sampled every 50 ms. "Parsed whole" is the read before streaming (readFile, JSON.parse of the whole text, then per-entry validation); "streamed" reads 64 KB chunks, finds each entry's bytes and JSON.parses it alone (src/sources/file/json-entries.ts).${process.env.BENCH_SOURCES_1M === '1' ? '' : ' (1,000,000 users: run with BENCH_SOURCES_1M=1.)'}`,
    '',
    '| directory | file (MB) | users | groups | memberships | read (s) | CPU (s) | peak RSS (MB) | RSS before the read (MB) | peak − before (MB) | live heap after (MB) | young generation (MB) | streamed ÷ whole |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows,
    '',
    ...notes,
  ].join('\n');
}

await main();
