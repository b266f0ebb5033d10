/**
 * Cost of the LDAP source: 50,000 users and 2,000 groups read from a private slapd (paged,
 * 1,000-entry size limit) into a plan against an empty simulator, next to the same directory
 * from a file source. Each run is a separate process so peak RSS is its own.
 *
 *   node bench/ldap-source.ts [--users 50000] [--groups 2000]
 *
 * Needs slapd + ldap-utils (see test/helpers/slapd.ts). Writes a section of bench/RESULTS.md.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { LdifEntry } from '../test/helpers/ldif.ts';
import { writeResultsSection } from './lib/results-md.ts';

const HERE = import.meta.dirname;

interface ChildResult {
  label: string;
  totalMs: number;
  sourceMs: number;
  platformMs: number;
  planMs: number;
  users: number;
  groups: number;
  membersAdd: number;
  peakRssMB: number;
  baseRssMB: number;
}

async function child(label: string, configPath: string): Promise<void> {
  const { loadConfig } = await import('../src/config/load.ts');
  const { createLogger } = await import('../src/observability/logger.ts');
  const { buildReconcileContext } = await import('../src/reconcile/from-config.ts');
  const { planReconcile } = await import('../src/reconcile/engine.ts');
  const baseRssMB = process.memoryUsage().rss / 1024 / 1024;
  const loaded = await loadConfig(configPath);
  const ctx = buildReconcileContext(loaded, createLogger({ level: 'warn' }));
  const t0 = performance.now();
  try {
    const planned = await planReconcile(ctx, { allowDeletes: false });
    const totalMs = performance.now() - t0;
    const summary = planned.plan.summary;
    const result: ChildResult = {
      label,
      totalMs,
      sourceMs: planned.timings.sourceMs,
      platformMs: planned.timings.platformMs,
      planMs: planned.timings.planMs,
      users: summary.usersCreate,
      groups: summary.groupsCreate,
      membersAdd: summary.membersAdd,
      // maxRSS is in kilobytes.
      peakRssMB: process.resourceUsage().maxRSS / 1024,
      baseRssMB,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await ctx.close();
  }
}

function* directory(users: number, groups: number): Generator<LdifEntry> {
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
        mail: `${uid}@example.org`,
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

/** Every user in two groups; a few large groups on top. */
function groupMembers(g: number, users: number, groups: number): number[] {
  const out: number[] = [];
  for (let i = g; i < users; i += groups) out.push(i);
  for (let i = (g * 7) % groups; i < users; i += groups) if (i !== g) out.push(i);
  if (g < 5) for (let i = 0; i < users; i += 10) out.push(i);
  return [...new Set(out)];
}

function fileDirectory(users: number, groups: number): string {
  const u = Array.from({ length: users }, (_, i) => ({
    externalId: `user${i}`,
    userName: `user${i}`,
    givenName: 'User',
    familyName: `N${i}`,
    displayName: `User ${i}`,
    emails: [`user${i}@example.org`],
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
      [join(HERE, 'ldap-source.ts'), '--child', label, '--config', config],
      { maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return rej(new Error(`${label} run failed: ${stderr || err.message}`));
        const line = stdout.trim().split('\n').pop() ?? '';
        res(JSON.parse(line) as ChildResult);
      },
    );
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: 'string' },
      config: { type: 'string' },
      users: { type: 'string', default: '50000' },
      groups: { type: 'string', default: '2000' },
    },
  });
  if (values.child) return child(values.child, values.config as string);

  const users = Number(values.users);
  const groups = Number(values.groups);
  const { startSlapd } = await import('../test/helpers/slapd.ts');
  const { startSimulator } = await import('../src/simulator/index.ts');
  const dir = mkdtempSync(join(tmpdir(), 'bench-ldap-'));
  const t0 = performance.now();
  const sl = await startSlapd({ entries: directory(users, groups), sizeLimit: 1000 });
  const loadMs = performance.now() - t0;
  const sim = await startSimulator({ maxPageSize: 1000 });
  try {
    writeFileSync(join(dir, 'password'), sl.readerPassword);
    writeFileSync(join(dir, 'directory.json'), fileDirectory(users, groups));
    const platform = { baseUrl: sim.url, token: 'test-token', allowInsecureHttp: true, scim: { pageSize: 1000 } };
    const common = { tenant: 'bench', platform, state: { dir: join(dir, 'state') } };
    const ldapSource = {
      type: 'ldap',
      url: sl.url,
      allowInsecure: true,
      bindDn: sl.readerDn,
      bindPasswordFile: 'password',
      pageSize: 1000,
      users: { baseDn: 'ou=people,dc=example,dc=org', attributes: { extra: { department: 'departmentNumber' } } },
      groups: { baseDn: 'ou=groups,dc=example,dc=org' },
    };
    writeFileSync(join(dir, 'ldap.yaml'), JSON.stringify({ ...common, provisioning: { source: ldapSource, guards: { maxDeletes: 0 } } }));
    writeFileSync(
      join(dir, 'file.yaml'),
      JSON.stringify({ ...common, provisioning: { source: { type: 'file', path: 'directory.json' }, guards: { maxDeletes: 0 } } }),
    );

    const file = await runChild('file', join(dir, 'file.yaml'));
    const ldap = await runChild('ldap', join(dir, 'ldap.yaml'));
    const row = (r: ChildResult): string =>
      `| ${r.label} | ${r.users} | ${r.groups} | ${r.membersAdd} | ${(r.sourceMs / 1000).toFixed(2)} | ${(r.totalMs / 1000).toFixed(2)} | ${r.peakRssMB.toFixed(0)} |`;
    const section = [
      `## LDAP source (bench/ldap-source.ts)`,
      '',
      `${users} users, ${groups} groups (every user in ≥2 groups, 5 groups with ${Math.ceil(users / 10)}+ members), planned against an empty simulator. slapd bulk load: ${(loadMs / 1000).toFixed(1)}s. Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}.`,
      '',
      '| source | users to create | groups to create | members to add | source read (s) | read + plan (s) | peak RSS (MB) |',
      '|---|---:|---:|---:|---:|---:|---:|',
      row(file),
      row(ldap),
      '',
      `Ratio ldap/file: read+plan ×${(ldap.totalMs / file.totalMs).toFixed(2)}, peak RSS ×${(ldap.peakRssMB / file.peakRssMB).toFixed(2)}.`,
    ].join('\n');
    process.stdout.write(`${section}\n`);
    await writeResultsSection('ldap-source', section);
  } finally {
    await sim.close();
    await sl.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
