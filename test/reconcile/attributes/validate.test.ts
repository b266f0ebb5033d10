/** `validate` with user attributes: the connectivity probe uses the platform API token and reports a wrong-type definition; the token is redacted. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, merge, startSim, type Workspace } from '../../helpers/reconcile-harness.ts';
import { attributeConfig, staff } from './support.ts';

describe('validate --check-connectivity with user attributes', () => {
  let sim: Simulator;
  let ws: Workspace;
  beforeAll(async () => {
    sim = await startSim({ tokens: [{ token: 'scim-only-4f1e', kind: 'scim' }, { token: 'api-token-9b2c' }] });
    ws = createWorkspace(sim, {
      directory: { users: [staff(1, { l: 'eu' })], groups: [] },
      config: merge(attributeConfig(), { platform: { token: 'scim-only-4f1e', apiToken: '${API_TOKEN}' } }),
    });
  });
  afterAll(() => sim.close());

  it('probes the definitions with the API token, names what it would create and a wrong type; never prints the token', async () => {
    sim.attributes.createDefinition({ name: 'clearance', type: 'string' });
    const run = await ws.cli(['validate', '--config', ws.configPath, '--check-connectivity', '--json'], {
      env: { API_TOKEN: 'api-token-9b2c' },
    });
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as {
      checks: Array<{ name: string; ok: boolean; detail: string }>;
      config: { platform: { apiToken: string } };
    };
    expect(out.checks.find((c) => c.name === 'user-attributes')).toEqual({
      name: 'user-attributes',
      ok: false,
      detail:
        '1 definitions readable; to create: region, department, costCentre, customers; WRONG TYPE: clearance is string, config says boolean',
    });
    expect(out.checks.find((c) => c.name === 'platform')?.ok).toBe(true);
    expect(out.config.platform.apiToken).not.toContain('api-token-9b2c');
    expect(run.stdout + run.stderr).not.toContain('api-token-9b2c');
  });

  it('without apiToken the SCIM-only token is refused by the attribute API (403): the probe says so, exit 2', async () => {
    ws.writeConfig(merge(attributeConfig(), { platform: { token: 'scim-only-4f1e' } }));
    const run = await ws.cli(['validate', '--config', ws.configPath, '--check-connectivity', '--json']);
    const out = JSON.parse(run.stdout) as { checks: Array<{ name: string; ok: boolean; code?: string }> };
    expect(out.checks.find((c) => c.name === 'user-attributes')).toMatchObject({ ok: false, code: 'E_AUTH_FORBIDDEN' });
    expect(run.code).toBe(2); // a refused credential is a config fix, as for the other checks
  });
});
