import { describe, expect, it } from 'vitest';
import { simulateCommand, simulatorOptionsFrom } from '../../src/cli/simulate.ts';
import { spawnSimulator } from './spawn.ts';

describe('simulate command', () => {
  it('prints one listening line, serves with the given token and stops cleanly on SIGTERM', async () => {
    const sim = await spawnSimulator(['--port', '0', '--token', 'T1', '--users', '30', '--max-page-size', '7', '--no-patch']);
    try {
      expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const list = await fetch(`${sim.url}/api/scim/v2/Users?count=100`, { headers: { authorization: 'Bearer T1' } });
      expect(list.status).toBe(200);
      expect(await list.json()).toMatchObject({ totalResults: 30, itemsPerPage: 7 });
      expect((await fetch(`${sim.url}/api/scim/v2/Users`, { headers: { authorization: 'Bearer test-token' } })).status).toBe(401);
      const spc = (await (
        await fetch(`${sim.url}/api/scim/v2/ServiceProviderConfig`, { headers: { authorization: 'Bearer T1' } })
      ).json()) as { patch: { supported: boolean } };
      expect(spc.patch.supported).toBe(false);
    } finally {
      expect(await sim.stop()).toBe(0);
    }
    expect(sim.stderr()).not.toContain('T1'); // the token never reaches the logs
  });

  it('maps --fault-rate and --latency-ms to fault rules', () => {
    const cmd = simulateCommand().exitOverride();
    cmd.parseOptions(['--fault-rate', '0.25', '--latency-ms', '40', '--token', 'a', '--token', 'b', '--audit-id-column']);
    const opts = simulatorOptionsFrom(cmd.opts());
    expect(opts.faults).toEqual([
      { kind: 'latency', latencyMs: 40, jitterMs: 0 },
      { kind: 'status', status: 503, retryAfterSeconds: 1, rate: 0.25 },
    ]);
    expect(opts.tokens).toEqual([{ token: 'a' }, { token: 'b' }]);
    expect(opts.audit).toMatchObject({ idColumn: true, eventsPerHour: 60 });
    expect(() =>
      simulateCommand()
        .exitOverride()
        .configureOutput({ writeErr: () => {} })
        .parse(['--fault-rate', '2'], { from: 'user' }),
    ).toThrow();
  });
});
