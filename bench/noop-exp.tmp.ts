import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runMeasured } from './lib/peak-rss.ts';
import { BIN, startSimulatorProcess } from './lib/simulator-process.ts';
const dirPath = process.argv[2]!;
const flagsets = (process.argv[3] ?? '').split('|');
const dir = await mkdtemp(join(tmpdir(), 'noop-exp-'));
const configPath = join(dir, 'config.yaml');
await writeFile(configPath, stringify({ tenant: 'bench', platform: { baseUrl: '${SIM_URL}', token: 'bench-token', allowInsecureHttp: true, maxConnections: 64, scim: { pageSize: 1000 } }, provisioning: { source: { type: 'file', path: dirPath } }, state: { dir: 'state' }, logging: { level: 'warn' } }));
const ledgerOut = join(dir, 'state', 'bench', 'ledger.json');
const sim = await startSimulatorProcess({ token: 'bench-token', maxPageSize: 1000, seedDirectory: dirPath, ledgerOut });
try {
  for (const fs of flagsets) {
    const flags = fs.split(' ').filter(Boolean);
    const t0 = process.cpuUsage();
    const run = await runMeasured(process.execPath, [...flags, BIN, 'plan', '--config', configPath, '--json'], { env: { PATH: process.env.PATH, SIM_URL: sim.url }, cwd: dir, keepStdout: true });
    const plan = JSON.parse(run.stdout);
    console.log(`[${fs}] exit ${run.code} wall ${(run.wallMs/1000).toFixed(2)}s peak ${run.peakRssMb?.toFixed(0)} MB changes ${plan.summary.changes}`);
  }
} finally { await sim.stop(); }
