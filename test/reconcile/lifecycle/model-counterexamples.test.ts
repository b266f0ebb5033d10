/**
 * Sequences the model-based test (test/reconcile/model.property.test.ts) shrank to, kept as
 * named scenarios. Each is an ordinary week in a directory: a typo lands on a leaver's name,
 * a rename waits for a name an invalid entry still holds, a new group waits for a name a
 * rejected group still holds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, type DirUser, type Directory } from '../../helpers/reconcile-harness.ts';
import { apply, expectConverged, groups, user, users } from './support.ts';

const dir = (list: DirUser[], extraGroups: Directory['groups'] = []): Directory => ({
  users: list,
  groups: [{ externalId: 'g-1', displayName: 'Engineering', members: list.map((u) => u.externalId) }, ...extraGroups],
});

describe('model counterexamples', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('leaver whose name a typo claims: the account is held (not deactivated) until the typo is fixed', async () => {
    sim = await startSim();
    const ann = user('e-1', 'ann@example.com');
    const cat = user('e-3', 'cat@example.com');
    const dan = user('e-4', 'dan@example.com');
    const ws = createWorkspace(sim, { directory: dir([ann, cat, dan]) });
    await apply(ws);

    // dan's entry gets cat's userName and a broken e-mail, and cat leaves the same day.
    const typo = { ...dan, userName: 'cat@example.com', emails: 'not-an-e-mail' };
    ws.writeDirectory(dir([ann, typo]));
    const held = await apply(ws);
    expect(held.plan.users.deactivate).toEqual([]);
    expect(held.plan.protected.map((p) => p.externalId).sort()).toEqual(['e-3', 'e-4']);
    expect(users(sim)).toEqual(['ann@example.com e-1 active', 'cat@example.com e-3 active', 'dan@example.com e-4 active']);
    await expectConverged(ws);

    // The typo is fixed: cat is a plain leaver now, and is deactivated (1 of 4 managed objects
    // is above the default 20 %, so the operator approves it).
    ws.writeDirectory(dir([ann, dan]));
    expect((await ws.planInProcess()).guard.tripped).toBe(true);
    const fixed = await apply(ws, { allowDeletes: true });
    expect(fixed.plan.users.deactivate.map((d) => d.externalId)).toEqual(['e-3']);
    expect(users(sim)).toEqual(['ann@example.com e-1 active', 'cat@example.com e-3 inactive', 'dan@example.com e-4 active']);
    await expectConverged(ws);
  });

  it('rename onto a name an invalid entry still holds: skipped with its reason, applied once the entry is fixed', async () => {
    sim = await startSim();
    const ann = user('e-1', 'ann@example.com');
    const bob = user('e-2', 'bob@example.com');
    const ws = createWorkspace(sim, { directory: dir([ann, bob]) });
    await apply(ws);

    // ann's entry breaks; bob is renamed to ann's name (a duplicate the file source would
    // reject if ann's entry were valid and listed first).
    ws.writeDirectory(
      dir([
        { ...ann, emails: 'not-an-e-mail' },
        { ...bob, userName: 'ann@example.com' },
      ]),
    );
    const run = await apply(ws);
    expect(run.plan.users.update).toEqual([]);
    expect(run.plan.skipped).toEqual([
      expect.objectContaining({
        kind: 'user',
        ref: 'bob@example.com',
        reason: expect.stringMatching(/ann@example\.com.*rejected source entry/),
      }),
    ]);
    expect(users(sim)).toEqual(['ann@example.com e-1 active', 'bob@example.com e-2 active']);
    await expectConverged(ws);

    // ann leaves for good: her deactivated account keeps the name, so bob's rename is still
    // skipped with its reason, never a 409 on every run.
    ws.writeDirectory(dir([{ ...bob, userName: 'ann@example.com' }]));
    const after = await apply(ws, { allowDeletes: true });
    expect(after.result.failed).toEqual([]);
    expect(users(sim)).toEqual(['ann@example.com e-1 inactive', 'bob@example.com e-2 active']);
    const again = await ws.planInProcess();
    expect(again.summary.changes).toBe(0);
    expect(again.skipped.map((s) => s.kind)).toEqual(['user']);
  });

  it('new group with the name a rejected group still holds: waits, and the rejected group keeps its members', async () => {
    sim = await startSim();
    const people = [user('e-1', 'ann@example.com'), user('e-2', 'bob@example.com')];
    const ws = createWorkspace(sim, { directory: dir(people) });
    await apply(ws);

    // Engineering's entry breaks (blank name) and is renamed; a new group takes the name.
    ws.writeDirectory({
      users: people,
      groups: [
        { externalId: 'g-1', displayName: '   ', members: ['e-1', 'e-2'] },
        { externalId: 'g-2', displayName: 'Engineering', members: ['e-1'] },
      ],
    });
    const run = await apply(ws);
    expect(run.plan.groups.delete).toEqual([]);
    expect(run.plan.groups.create).toEqual([]);
    expect(groups(sim)).toEqual(['Engineering: ann@example.com bob@example.com']);
    await expectConverged(ws);
  });
});
