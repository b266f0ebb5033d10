import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '../../src/config/load.ts';
import { formatIssues, formatPath } from '../../src/config/format-issues.ts';
import { closestMatch, editDistance } from '../../src/config/suggest.ts';
import { ConfigError } from '../../src/errors.ts';
import { sourceSchema } from '../../src/sources/schema.ts';

/** The registered source types, read from the schema (others add types over time). */
const SOURCE_TYPES = sourceSchema.options.map((o) => o.shape.type.value);

async function issues(yaml: string): Promise<string[]> {
  try {
    await parseConfig(yaml, '/nonexistent', {});
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).issues;
  }
  throw new Error('expected the config to be refused');
}

const platform = (lines: string) => `platform:\n  baseUrl: https://acme.example.com\n  token: x\n${lines}`;

describe('config validation messages', () => {
  it('suggests the closest known key for a misspelled one, at any depth', async () => {
    expect(await issues('platform:\n  baseUrl: https://acme.example.com\n  tokn: abc\n')).toContain(
      'platform.tokn: unknown key — did you mean "token"?',
    );
    expect(await issues(platform('  retry: { maxAttemps: 3 }\n'))).toEqual([
      'platform.retry.maxAttemps: unknown key — did you mean "maxAttempts"?',
    ]);
    expect(await issues(platform('provisioning:\n  source: { type: file, path: d.yaml }\n  guards: { maxDeletPercent: 5 }\n'))).toEqual([
      'provisioning.guards.maxDeletPercent: unknown key — did you mean "maxDeletePercent"?',
    ]);
  });

  it('lists the allowed keys when nothing is close', async () => {
    const [line] = await issues(platform('  wholly_unrelated: 1\n'));
    expect(line).toMatch(/^platform\.wholly_unrelated: unknown key; allowed here: baseUrl, token, tokenFile, /);
  });

  it('names the key path, the fix and the value given', async () => {
    const out = await issues(
      [
        'tenant: Acme Corp',
        'platform:',
        '  baseUrl: ftp:/x',
        '  token: x',
        '  authScheme: bearer',
        '  maxConnections: 0',
        'provisioning:',
        '  source: { type: ldapp }',
      ].join('\n'),
    );
    expect(out.slice(0, 4)).toEqual([
      'tenant: use lower-case letters, digits, - and _ (max 63 chars) (got "Acme Corp")',
      'platform.baseUrl: must be a URL like https://acme.example.com (got "ftp:/x")',
      'platform.authScheme: must be one of "Bearer", "Api-Key" (got "bearer") — did you mean "Bearer"?',
      'platform.maxConnections: must be ≥ 1 (got 0)',
    ]);
    expect(out).toHaveLength(5);
    expect(out[4]).toMatch(
      new RegExp(`^provisioning\\.source\\.type: unknown source type "ldapp"; expected one of: ${SOURCE_TYPES.join(', ')}`),
    );
    if (SOURCE_TYPES.includes('ldap')) expect(out[4]).toMatch(/ — did you mean "ldap"\?$/);
  });

  it('says what is missing', async () => {
    expect(await issues('platform:\n  token: x\nprovisioning:\n  source: { type: file }\n')).toEqual([
      'platform.baseUrl: required key is missing — must be a URL like https://acme.example.com',
      'provisioning.source.path: required key is missing (expected a string)',
    ]);
    expect(await issues('tenant: acme\n')).toEqual(['platform: required key is missing (expected a mapping (key: value))']);
  });

  it('reports the object form of a mapping rule with its own paths', async () => {
    const out = await issues(
      platform(
        'provisioning:\n  source: { type: file, path: d.yaml }\n  mapping:\n    user:\n      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department": { from: 1 }\n      title: { form: x }\n',
      ),
    );
    expect(out).toContain(
      'provisioning.mapping.user["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department"].from: expected a string, got 1',
    );
    expect(out).toContain('provisioning.mapping.user.title.form: unknown key — did you mean "from"?');
  });

  it('never echoes the value of a secret-named key', async () => {
    const out = await issues('platform:\n  baseUrl: https://acme.example.com\n  token: 987654321\n');
    expect(out).toEqual(['platform.token: expected a string, got a number']);
    expect(out.join('\n')).not.toContain('987654321');
  });
});

describe('https enforcement at validation time', () => {
  it('refuses plain http:// unless allowInsecureHttp is set', async () => {
    expect(await issues('platform:\n  baseUrl: http://127.0.0.1:8080\n  token: x\n')).toEqual([
      'platform.baseUrl: uses plain http://; the platform only accepts HTTPS (set platform.allowInsecureHttp: true only for a loopback test server)',
    ]);
  });

  it('refuses plain http:// to a non-loopback host even with allowInsecureHttp', async () => {
    expect(await issues('platform:\n  baseUrl: http://scim.example.com\n  token: x\n  allowInsecureHttp: true\n')).toEqual([
      'platform.baseUrl: plain http:// is allowed only for loopback hosts, not scim.example.com',
    ]);
  });

  it('accepts loopback http:// with allowInsecureHttp, and https:// always', async () => {
    for (const url of ['http://127.0.0.1:4010', 'http://localhost', 'http://[::1]:9']) {
      const { config } = await parseConfig(`platform:\n  baseUrl: ${url}\n  token: x\n  allowInsecureHttp: true\n`, '/', {});
      expect(config.platform.baseUrl).toBe(url);
    }
    const { config } = await parseConfig('platform:\n  baseUrl: https://acme.example.com/tenant-a\n  token: x\n', '/', {});
    expect(config.platform.baseUrl).toBe('https://acme.example.com/tenant-a');
  });
});

describe('formatting helpers', () => {
  it('renders paths with indexes and quoted odd keys', () => {
    expect(formatPath(['audit', 'sinks', 0, 'url'])).toBe('audit.sinks[0].url');
    expect(formatPath(['mapping', 'urn:x:y'])).toBe('mapping["urn:x:y"]');
    expect(formatPath([])).toBe('(top level)');
  });

  it('prefixes a base path (used for entries of a source file)', () => {
    const schema = z.strictObject({ userName: z.string() });
    const r = schema.safeParse({ userName: 5 });
    expect(r.success).toBe(false);
    if (!r.success)
      expect(formatIssues(r.error.issues, { schema, input: { userName: 5 }, basePath: ['users', 3] })).toEqual([
        'users[3].userName: expected a string, got 5',
      ]);
  });

  it('measures edit distance and only suggests plausible typos', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('emial', 'email')).toBe(1);
    expect(closestMatch('tokn', ['token', 'tokenFile', 'baseUrl'])).toBe('token');
    expect(closestMatch('BASEURL', ['token', 'baseUrl'])).toBe('baseUrl');
    expect(closestMatch('zzzzzz', ['token', 'baseUrl'])).toBeUndefined();
  });
});
