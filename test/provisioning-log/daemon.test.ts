/**
 * The daemon's provisioning log: apply chunks on the workers append to the tenant's Redis
 * stream with the plan's before values, and with `deliverToSinks` the reconcile run hands the
 * new records to the audit sinks (position in Redis, so the next run sends only what is new).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProvisioningRecord } from '../../src/provisioning-log/record.ts';
import { people, person } from '../helpers/reconcile-harness.ts';
import { assertNoSecret, dumpKeyspace, waitFor } from '../helpers/daemon-harness.ts';
import { closingAfterEach, runsFinished } from '../daemon/support.ts';

const TOKEN = 'plog-daemon-token-5e0b7c3a91';
const READ_TOKEN = 'plog-ui-read-token-4c8e21f0';
const scene = closingAfterEach();

const sinkDocs = (
  path: string,
): Array<{ event: { id: string; kind: string; action: string; outcome: string }; provisioning: ProvisioningRecord }> => {
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
};

describe('daemon provisioning log', () => {
  it('joiners then a mover: records in the Redis stream, delivered once to the audit sink', async () => {
    const sim = await scene.sim(TOKEN);
    const ws = scene.workspace({ SIM_URL: sim.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory({ users: people(1, 30), groups: [] });
    writeFileSync(join(ws.dir, 'ui-read-token'), READ_TOKEN);
    ws.writeConfig({
      provisioningLog: { deliverToSinks: true },
      audit: { sinks: [{ type: 'file', name: 'siem', path: 'siem.ndjson' }] },
      // Small chunks: the records come from several apply jobs.
      daemon: { applyChunkSize: 7, ui: { readTokenFile: 'ui-read-token' } },
    });
    const d = await ws.spawnDaemon();
    const runs = (): number => runsFinished([d], 'reconcile').length;
    await ws.trigger();
    await waitFor(() => runs() === 1, 'the first run', 30_000);

    const stream = `${ws.keyPrefix}:{acme}:provisioning-log`;
    const entries = await ws.redis().xrange(stream, '-', '+');
    expect(entries).toHaveLength(30);
    const records = entries.map(([id, f]) => ({ id, ...(JSON.parse(f[1]!) as Omit<ProvisioningRecord, 'id'>) }));
    expect(records.every((r) => r.action === 'user.create' && r.result === 'ok' && r.object.id !== undefined)).toBe(true);
    const sink = join(ws.dir, 'siem.ndjson');
    await waitFor(() => sinkDocs(sink).length === 30, 'the records in the sink');
    expect(
      sinkDocs(sink)
        .map((e) => e.event.id)
        .sort(),
    ).toEqual(records.map((r) => `provisioning:acme:${r.id}`).sort());

    // A mover: the update's before value comes from the plan, through Redis, to the chunk.
    ws.writeDirectory({ users: [person(1, { familyName: 'Moved' }), ...people(2, 30)], groups: [] });
    await ws.trigger();
    await waitFor(() => runs() === 2, 'the second run', 30_000);
    await waitFor(() => sinkDocs(sink).length === 31, 'the update in the sink');
    const update = sinkDocs(sink).at(-1)!;
    expect(update.event).toMatchObject({ kind: 'provisioning', action: 'user.update', outcome: 'success' });
    expect(update.provisioning.changes).toContainEqual({ path: 'name.familyName', before: 'Family1', after: 'Moved' });
    expect(await ws.redis().get(`${stream}:delivered`)).toBe(update.event.id.replace('provisioning:acme:', ''));

    // The status page reports the sink and how far the log has been delivered.
    const page = await (await fetch(`${d.uiUrl}/ui/tenants/acme`, { headers: { authorization: `Bearer ${READ_TOKEN}` } })).text();
    expect(page).toMatch(/<th scope="row">siem<\/th><td>file<\/td>/);
    expect(page).toContain(`delivered up to <span class="mono">${update.event.id.replace('provisioning:acme:', '')}</span>`);

    for (const [key, value] of await dumpKeyspace(ws)) assertNoSecret(value, TOKEN, `redis key ${key}`);
    assertNoSecret(readFileSync(sink, 'utf8'), TOKEN, 'the sink file');
  }, 90_000);
});
