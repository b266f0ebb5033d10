/**
 * `validate` refuses every sink setting a sink would refuse at run time, naming the key, and
 * `validate --check-connectivity` health-checks every sink (exit 2 on a refused credential).
 * The daemon refuses the same settings at start (exit 2) instead of retrying a bad sink.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBulkReceiver, type BulkReceiver } from '../helpers/receivers/bulk-receiver.ts';
import { startHecReceiver, type HecReceiver } from '../helpers/receivers/hec-receiver.ts';
import { startSyslogReceiver, type SyslogReceiver } from '../helpers/receivers/syslog-receiver.ts';
import { runCli, startFakePlatform, type FakePlatform } from './run-cli.ts';

const HEC_TOKEN = 'hec-5b1d0f7a';
const dir = mkdtempSync(join(tmpdir(), 'scimsync-validate-sinks-'));
let platform: FakePlatform;
let hec: HecReceiver;
let es: BulkReceiver;
let syslog: SyslogReceiver;

beforeAll(async () => {
  [platform, hec, es, syslog] = await Promise.all([
    startFakePlatform(),
    startHecReceiver(HEC_TOKEN),
    startBulkReceiver('ApiKey es-key-1'),
    startSyslogReceiver(),
  ]);
  platform.routes.set('/api/scim/v2/ServiceProviderConfig', { status: 200, body: {} });
  mkdirSync(join(dir, 'out'));
});
afterAll(async () => {
  await Promise.all([platform.close(), hec.close(), es.close(), syslog.close()]);
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function config(sinks: string, extra = ''): string {
  const file = join(dir, `config-${++n}.yaml`);
  writeFileSync(file, `platform:\n  baseUrl: ${platform.url}\n  token: x\n  allowInsecureHttp: true\naudit:\n  sinks:\n${sinks}${extra}`);
  return file;
}

describe.concurrent('validate refuses sink settings the sink would refuse at run time (exit 2, key named)', () => {
  it('a Splunk sink on plain http:// to a remote host', async ({ expect }) => {
    const r = await runCli([
      'validate',
      '-c',
      config('    - { type: splunk-hec, name: splunk, url: "http://splunk.example.com:8088", token: t }\n'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('audit.sinks[0].url: uses plain http://; use https:// or set allowInsecureHttp: true for a trusted network');
  });

  it('an Elasticsearch URL with credentials in it', async ({ expect }) => {
    const r = await runCli([
      'validate',
      '-c',
      config('    - { type: elasticsearch, name: es, url: "https://elastic:changeme@es.example.com:9200" }\n'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("audit.sinks[0].url: must not contain credentials: use the sink's auth settings");
    expect(r.stderr).not.toContain('changeme');
  });

  it('an unreadable token file and CA file', async ({ expect }) => {
    const r = await runCli([
      'validate',
      '-c',
      config(
        '    - { type: splunk-hec, name: splunk, url: "https://splunk.example.com:8088", tokenFile: missing-token, tls: { caFile: missing-ca.pem } }\n',
      ),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('audit.sinks[0].tokenFile cannot be read (ENOENT): missing-token');
    expect(r.stderr).toContain('audit.sinks[0].tls.caFile cannot be read (ENOENT): missing-ca.pem');
  });

  it('the daemon refuses the same setting at start with exit 2, before touching Redis', async ({ expect }) => {
    const file = config(
      '    - { type: elasticsearch, name: es, url: "https://es.example.com:9200", auth: { type: api-key, apiKeyFile: no-such-key } }\n',
      'redis:\n  url: redis://127.0.0.1:1\n',
    );
    const r = await runCli(['daemon', '-c', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('audit.sinks[0].auth.apiKeyFile cannot be read (ENOENT): no-such-key');
  });
});

describe('validate --check-connectivity probes every sink', () => {
  it('HEC health and token, Elasticsearch ping, syslog TCP connect and a writable file directory: all ok', async () => {
    const sinks = [
      `    - { type: splunk-hec, name: splunk, url: "${hec.url}", token: ${HEC_TOKEN}, allowInsecureHttp: true }`,
      `    - { type: elasticsearch, name: es, url: "${es.url}", allowInsecureHttp: true, auth: { type: api-key, apiKey: es-key-1 } }`,
      `    - { type: syslog, name: siem, protocol: tcp, host: 127.0.0.1, port: ${syslog.port} }`,
      '    - { type: file, name: archive, path: out/audit.ndjson }',
    ].join('\n');
    const r = await runCli(['validate', '--check-connectivity', '-c', config(`${sinks}\n`)]);
    expect(r.stdout).toMatch(/sink splunk +ok +http:\/\/127\.0\.0\.1:\d+: HEC healthy; token accepted/);
    expect(r.stdout).toMatch(/sink es +ok +http:\/\/127\.0\.0\.1:\d+: ping ok \(cluster test-cluster, elasticsearch 8\.15\.0\)/);
    expect(r.stdout).toMatch(/sink siem +ok +tcp:\/\/127\.0\.0\.1:\d+: TCP connection ok/);
    expect(r.stdout).toMatch(/sink archive +ok +.*out is writable/);
    expect(r.code).toBe(0);
    // Nothing was indexed or written by the probes.
    expect(hec.events).toEqual([]);
    expect(es.count()).toBe(0);
  });

  it('a refused HEC token exits 2 and names the sink; the token is not printed', async () => {
    const r = await runCli([
      'validate',
      '--check-connectivity',
      '-c',
      config(`    - { type: splunk-hec, name: splunk, url: "${hec.url}", token: wrong-token-77, allowInsecureHttp: true }\n`),
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/sink splunk +failed +\[E_AUTH_FORBIDDEN\] .*\/services\/collector\/event answered HTTP 403: .*Invalid token/);
    expect(r.stdout).not.toContain('wrong-token-77');
  });

  it('an Elasticsearch 401 exits 2; a missing file directory and a closed syslog port exit 1', async () => {
    const es401 = await runCli([
      'validate',
      '--check-connectivity',
      '-c',
      config(`    - { type: elasticsearch, name: es, url: "${es.url}", allowInsecureHttp: true, auth: { type: api-key, apiKey: bad } }\n`),
    ]);
    expect(es401.code).toBe(2);
    expect(es401.stdout).toMatch(/sink es +failed +\[E_AUTH_INVALID\]/);
    const other = await runCli([
      'validate',
      '--check-connectivity',
      '-c',
      config(
        '    - { type: file, name: archive, path: nowhere/audit.ndjson }\n    - { type: syslog, name: siem, protocol: tcp, host: 127.0.0.1, port: 1 }\n',
      ),
    ]);
    expect(other.code).toBe(1);
    expect(other.stdout).toMatch(/sink archive +failed +.*nowhere does not exist or is not a directory/);
    expect(other.stdout).toMatch(/sink siem +failed +.*ECONNREFUSED/);
  });
});
