/**
 * 401 and 403 through the CLI: exit 2 (only a credential/config change can fix them), a
 * message that says which of the two it is, nothing written, and the token never echoed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import { SIM_TOKEN, createWorkspace, people, startSim, writeRequests } from '../helpers/reconcile-harness.ts';

const WRONG = 'wrong-secret-7c3e9a1d';
const SCOPED = 'scoped-secret-4f2b8e60';

describe('credential errors through the CLI', () => {
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSim({ tokens: [{ token: SIM_TOKEN }, { token: SCOPED, kind: 'api-key', deployments: ['d1'] }] });
  });
  afterAll(() => sim.close());

  const directory = { users: people(1, 3), groups: [] };

  it('a wrong token: exit 2, "credential missing, malformed or expired", token not in the output', async () => {
    const ws = createWorkspace(sim, { directory, token: WRONG });
    sim.clearRequests();
    const [apply, plan] = await Promise.all([
      ws.cli(['apply', '--config', ws.configPath, '--json']),
      ws.cli(['plan', '--config', ws.configPath]),
    ]);
    for (const run of [apply, plan]) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain('[E_AUTH_INVALID]');
      expect(run.stderr).toContain('credential missing, malformed or expired');
      expect(run.stdout + run.stderr).not.toContain(WRONG);
    }
    expect(sim.requests.length).toBeGreaterThan(0);
    expect(sim.requests.every((r) => r.status === 401)).toBe(true);
    expect(writeRequests(sim)).toEqual([]);
  });

  it('a deployment-scoped API key: exit 2, "not authorized for this target", token not in the output', async () => {
    const ws = createWorkspace(sim, { directory, token: SCOPED, config: { platform: { authScheme: 'Api-Key' } } });
    sim.clearRequests();
    const run = await ws.cli(['apply', '--config', ws.configPath, '--json', '--debug']);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('[E_AUTH_FORBIDDEN]');
    expect(run.stderr).toContain('not authorized for this target');
    // Even with --debug (stack traces, debug logs) the key stays out of every line.
    expect(run.stdout + run.stderr).not.toContain(SCOPED);
    expect(sim.requests.every((r) => r.status === 403)).toBe(true);
    expect(writeRequests(sim)).toEqual([]);
    expect(sim.store.counts().users).toBe(0);
  });
});
