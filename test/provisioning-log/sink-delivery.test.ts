/**
 * The provisioning log through the audit sinks, with the audit pipeline's guarantees: events
 * of kind `provisioning` with stable keys; the position moves only after every sink
 * acknowledged (or dead-lettered) a batch; a sink that fails keeps the position, and the next
 * delivery starts at the same record; an idempotent sink holds one copy after a redelivery.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileDeadLetterStore } from '../../src/audit/dead-letter/file-store.ts';
import { fileSinkSchema } from '../../src/audit/sinks/file/config.ts';
import { createSink } from '../../src/audit/sinks/registry.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { FileProvisioningLogStore } from '../../src/provisioning-log/file-store.ts';
import type { NewRecord } from '../../src/provisioning-log/record.ts';
import { deliverRecords, EVENT_KIND } from '../../src/provisioning-log/sink-delivery.ts';
import { createWorkspace, people, startSim } from '../helpers/reconcile-harness.ts';
import { JsonlSink } from '../audit/support/jsonl-sink.ts';

const dirs: string[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const rec = (n: number, result: 'ok' | 'failed' = 'ok'): NewRecord => ({
  time: new Date().toISOString(),
  tenant: 'acme',
  runId: 'run-1',
  action: 'user.create',
  result,
  object: { type: 'user', externalId: `u-${n}`, name: `user${n}@example.com`, id: `id-${n}` },
  changes: [{ path: 'userName', before: null, after: `user${n}@example.com` }],
  ...(result === 'failed' ? { error: { code: 'E_REJECTED', message: 'platform answered 400' } } : {}),
});

function scene(): { dir: string; store: FileProvisioningLogStore; deadLetters: FileDeadLetterStore } {
  const dir = mkdtempSync(join(tmpdir(), 'plog-sinks-'));
  dirs.push(dir);
  const deadLetters = new FileDeadLetterStore(join(dir, 'audit'));
  cleanups.push(() => deadLetters.close());
  return { dir, store: new FileProvisioningLogStore(dir, 'acme', { maxEntries: 1000, maxAgeMs: 86_400_000 }), deadLetters };
}

const lines = (path: string): Array<Record<string, unknown>> =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('provisioning log to the audit sinks', () => {
  it('delivers each record once as an event of kind provisioning, in ECS and plain styles', async () => {
    const { dir, store, deadLetters } = scene();
    await store.append([rec(1), rec(2, 'failed')]);
    const ecsSink = createSink(fileSinkSchema.parse({ type: 'file', name: 'siem', path: join(dir, 'siem.ndjson') }), {
      configDir: dir,
      logger: createLogger({ level: 'silent' }),
    });
    const res = await deliverRecords({ store, sinks: [ecsSink], deadLetters, fieldStyle: 'ecs', batchSize: 1 });
    expect(res).toMatchObject({ delivered: 2, deadLettered: 0 });
    const docs = lines(join(dir, 'siem.ndjson'));
    expect(docs).toHaveLength(2);
    const [ids] = [await store.after(null, 10)];
    expect(docs[0]).toMatchObject({
      event: { id: `provisioning:acme:${ids[0]!.id}`, kind: EVENT_KIND, action: 'user.create', outcome: 'success' },
      user: { name: 'user1@example.com' },
    });
    expect(docs[1]).toMatchObject({
      event: { outcome: 'failure' },
      provisioning: { error: { code: 'E_REJECTED' }, object: { externalId: 'u-2' } },
    });
    expect(await store.deliveredUpTo()).toBe(ids[1]!.id);
    // Nothing new: nothing written.
    expect((await deliverRecords({ store, sinks: [ecsSink], deadLetters, fieldStyle: 'ecs', batchSize: 10 })).delivered).toBe(0);
    expect(lines(join(dir, 'siem.ndjson'))).toHaveLength(2);

    await store.append([rec(3)]);
    const plain = new JsonlSink('plain', join(dir, 'plain.jsonl'));
    await deliverRecords({ store, sinks: [plain], deadLetters, fieldStyle: 'plain', batchSize: 10 });
    expect(await plain.keys()).toEqual([`provisioning:acme:${(await store.after(ids[1]!.id, 10))[0]!.id}`]);
  });

  it('a failing sink keeps the position; the next delivery resumes at the same record and loses none', async () => {
    const { dir, store, deadLetters } = scene();
    await store.append([rec(1), rec(2), rec(3), rec(4)]);
    const broken = new JsonlSink('siem', join(dir, 'siem.jsonl'), { failFromWrite: 2 });
    await expect(deliverRecords({ store, sinks: [broken], deadLetters, fieldStyle: 'ecs', batchSize: 2 })).rejects.toThrow(
      /destination unavailable/,
    );
    const all = await store.after(null, 10);
    // The first batch was acknowledged; the second was not: the position is after the first.
    expect(await store.deliveredUpTo()).toBe(all[1]!.id);
    const healed = new JsonlSink('siem', join(dir, 'siem.jsonl'));
    expect((await deliverRecords({ store, sinks: [healed], deadLetters, fieldStyle: 'ecs', batchSize: 2 })).delivered).toBe(2);
    expect(await healed.keys()).toEqual(all.map((r) => `provisioning:acme:${r.id}`));
  });

  it('a rejected event is dead-lettered under its sink and the position moves on', async () => {
    const { dir, store, deadLetters } = scene();
    await store.append([rec(1), rec(2)]);
    const picky = new JsonlSink('siem', join(dir, 'siem.jsonl'), { reject: (e) => e.json.includes('u-2') });
    const res = await deliverRecords({ store, sinks: [picky], deadLetters, fieldStyle: 'ecs', batchSize: 10 });
    expect(res).toMatchObject({ delivered: 2, deadLettered: 1 });
    expect(await deadLetters.counts()).toEqual({ siem: 1 });
    const [letter] = await deadLetters.peek('siem', 10);
    expect(letter?.event?.json).toContain('"kind":"provisioning"');
    expect(await store.deliveredUpTo()).toBe((await store.after(null, 10))[1]!.id);
  });

  it('after a crash between the sink ack and the position commit, an idempotent sink keeps one copy', async () => {
    const { dir, store, deadLetters } = scene();
    await store.append([rec(1), rec(2)]);
    const file = (): ReturnType<typeof createSink> =>
      createSink(fileSinkSchema.parse({ type: 'file', name: 'siem', path: join(dir, 'siem.ndjson') }), {
        configDir: dir,
        logger: createLogger({ level: 'silent' }),
      });
    await deliverRecords({ store, sinks: [file()], deadLetters, fieldStyle: 'ecs', batchSize: 10 });
    // The crash: the position was never written.
    rmSync(join(dir, 'acme', 'provisioning-log.delivered.json'));
    await deliverRecords({ store, sinks: [file()], deadLetters, fieldStyle: 'ecs', batchSize: 10 });
    expect(lines(join(dir, 'siem.ndjson'))).toHaveLength(2);
  });

  it('one-shot apply with provisioningLog.deliverToSinks writes its records to the sinks', async () => {
    const sim = await startSim();
    cleanups.push(() => sim.close());
    const ws = createWorkspace(sim, {
      directory: { users: people(1, 2), groups: [] },
      config: { provisioningLog: { deliverToSinks: true }, audit: { sinks: [{ type: 'file', name: 'siem', path: 'siem.ndjson' }] } },
    });
    dirs.push(ws.dir);
    expect((await ws.apply()).code).toBe(0);
    const docs = lines(join(ws.dir, 'siem.ndjson'));
    expect(docs.map((d) => (d['provisioning'] as { object: { name: string } }).object.name).sort()).toEqual([
      'user1@example.com',
      'user2@example.com',
    ]);
    expect(docs.every((d) => (d['event'] as { kind: string }).kind === 'provisioning')).toBe(true);
  });
});
