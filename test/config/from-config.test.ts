import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { platformClientOptions, createPlatformClient } from '../../src/platform/from-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'scimsync-from-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('platform client options from config', () => {
  it('converts units and carries the credential, CA and retry policy', async () => {
    writeFileSync(join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const loaded = await parseConfig(
      [
        'platform:',
        '  baseUrl: https://acme.example.com',
        '  token: tok-1',
        '  authScheme: Api-Key',
        '  caFile: ca.pem',
        '  maxConnections: 4',
        '  timeoutSeconds: 2.5',
        '  maxResponseMegabytes: 2',
        '  retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100, maxRetryAfterSeconds: 7 }',
      ].join('\n'),
      dir,
      {},
    );
    const opts = platformClientOptions(loaded);
    expect(opts).toMatchObject({
      baseUrl: 'https://acme.example.com',
      token: 'tok-1',
      authScheme: 'Api-Key',
      allowInsecureHttp: false,
      maxConnections: 4,
      connectTimeoutMs: 2500,
      headersTimeoutMs: 2500,
      bodyTimeoutMs: 2500,
      maxResponseBytes: 2 * 1024 * 1024,
      retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100, maxRetryAfterMs: 7000 },
      ca: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
    });
    expect(opts.userAgent).toMatch(/^scim-audit-sync\/\d+\.\d+\.\d+/);
    // A probe overrides one retry field and keeps the rest of the configured policy.
    expect(platformClientOptions(loaded, { retry: { maxAttempts: 2 } }).retry).toEqual({
      maxAttempts: 2,
      baseDelayMs: 10,
      maxDelayMs: 100,
      maxRetryAfterMs: 7000,
    });
    const client = createPlatformClient(loaded);
    expect(client.baseUrl.href).toBe('https://acme.example.com/');
    await client.close();
  });
});
