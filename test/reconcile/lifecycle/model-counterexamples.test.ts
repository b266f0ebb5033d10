/**
 * Sequences the model-based test (test/reconcile/model.property.test.ts) shrank to, kept as
 * named scenarios. Each is an ordinary week in a directory: a typo lands on a leaver's name,
 * a rename waits for a name an invalid entry still holds, a new group waits for a name a
 * rejected group still holds, a swap and a leaver meet a typo, a broken group entry is swapped
 * and then removed, the last person left has a typo in their entry, a typo outlives the person
 * whose name it took.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, type DirUser, type Directory } from '../../helpers/reconcile-harness.ts';
import { apply, byName, expectConverged, groups, user, users } from './support.ts';

const dir = (list: DirUser[], extraGroups: Directory['groups'] = []): Directory => ({
  users: list,
  groups: [{ externalId: 'g-1', displayName: 'Engineering', members: list.map((u) => u.externalId) }, ...extraGroups],
});

/** The model's starting people (model/commands.ts initialModel): the soak's sequences begin with them. */
const FOUR_PEOPLE: DirUser[] = [
  user('e-1', 'ann@example.com'),
  user('e-2', 'bob@example.com'),
  user('e-3', 'cat@example.com'),
  user('e-4', 'dan@example.com'),
];

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

  it('a typo, a swap of two names and a leaver: the leaver keeps account and groups while the typo claims the name, and loses both once it is fixed', async () => {
    // Soak seed 302116 (ledger ownership): DuplicateNameTypo(0), NameRotation(0, 2), Leaver(0).
    sim = await startSim();
    const [ann, bob, cat, dan] = FOUR_PEOPLE as [DirUser, DirUser, DirUser, DirUser];
    const twoGroups = (list: DirUser[], engineering: string[]): Directory => ({
      users: list,
      groups: [
        { externalId: 'g-5', displayName: 'Engineering', members: engineering },
        { externalId: 'g-6', displayName: 'Sales', members: ['e-3', 'e-4'] },
      ],
    });
    const ws = createWorkspace(sim, { directory: twoGroups([ann, bob, cat, dan], ['e-1', 'e-2', 'e-3']) });
    await apply(ws);
    const before = groups(sim);
    expect(before).toEqual(['Engineering: ann@example.com bob@example.com cat@example.com', 'Sales: cat@example.com dan@example.com']);

    // bob's entry takes ann's userName by mistake; then ann and cat swap names, so bob's typo is
    // now the first entry with ann's name and cat's entry the duplicate; then ann leaves.
    const bobTypo = { ...bob, userName: 'ann@example.com' };
    const catAsAnn = { ...cat, userName: 'ann@example.com' };
    ws.writeDirectory(twoGroups([ann, bobTypo, cat, dan], ['e-1', 'e-2', 'e-3']));
    await apply(ws);
    ws.writeDirectory(twoGroups([{ ...ann, userName: 'cat@example.com' }, bobTypo, catAsAnn, dan], ['e-1', 'e-2', 'e-3']));
    await apply(ws);
    ws.writeDirectory(twoGroups([bobTypo, catAsAnn, dan], ['e-2', 'e-3']));
    const left = await apply(ws, { allowDeletes: true });

    // The leaver's account still carries the name cat's rejected entry asks for: it may be
    // cat's, so it is protected — not deactivated and still in Engineering — and the plan says why.
    expect(left.plan.users.deactivate).toEqual([]);
    expect(left.plan.protected).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'user', externalId: 'e-1', name: 'ann@example.com', rejection: expect.stringContaining('e-3') }),
      ]),
    );
    expect(users(sim)).toEqual([
      'ann@example.com e-1 active',
      'bob@example.com e-2 active',
      'cat@example.com e-3 active',
      'dan@example.com e-4 active',
    ]);
    expect(groups(sim)).toEqual(before);
    await expectConverged(ws);

    // bob's typo is fixed: nothing claims the leaver's account any more, so it is deactivated
    // and leaves Engineering. cat's new name stays with that deactivated account (a leaver keeps
    // its name), so cat's rename is skipped with its reason, not retried into a 409.
    ws.writeDirectory(twoGroups([bob, catAsAnn, dan], ['e-2', 'e-3']));
    const fixed = await apply(ws, { allowDeletes: true });
    expect(fixed.plan.users.deactivate.map((d) => d.externalId)).toEqual(['e-1']);
    expect(fixed.plan.skipped).toEqual([
      expect.objectContaining({ kind: 'user', ref: 'cat@example.com', reason: expect.stringContaining('ann@example.com') }),
    ]);
    expect(users(sim)).toEqual([
      'ann@example.com e-1 inactive',
      'bob@example.com e-2 active',
      'cat@example.com e-3 active',
      'dan@example.com e-4 active',
    ]);
    expect(groups(sim)).toEqual(['Engineering: bob@example.com cat@example.com', 'Sales: cat@example.com dan@example.com']);
    await expectConverged(ws);
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

  it('a broken group entry, a swap of two group names, then the broken group is removed: the rename lands in the run that deletes it', async () => {
    // Soak seed 302117 (ledger ownership): GroupEdit(0, break), GroupEdit(0, swap-names), GroupEdit(0, delete).
    sim = await startSim();
    const people = FOUR_PEOPLE;
    const engineering = { externalId: 'g-5', displayName: 'Engineering', members: ['e-1', 'e-2', 'e-3'] };
    const sales = { externalId: 'g-6', displayName: 'Sales', members: ['e-3', 'e-4'] };
    const ws = createWorkspace(sim, { directory: { users: people, groups: [engineering, sales] } });
    await apply(ws);

    // Engineering's entry breaks (blank name) and the two names are swapped: Sales cannot take
    // "Engineering" while the broken entry's group holds it.
    ws.writeDirectory({
      users: people,
      groups: [
        { ...engineering, displayName: '   ' },
        { ...sales, displayName: 'Engineering' },
      ],
    });
    const swapped = await apply(ws);
    expect(swapped.plan.skipped).toEqual([
      expect.objectContaining({ kind: 'group', ref: 'Sales', reason: expect.stringContaining('kept for the rejected source entry') }),
    ]);
    expect(groups(sim)).toEqual(['Engineering: ann@example.com bob@example.com cat@example.com', 'Sales: cat@example.com dan@example.com']);

    // The broken entry is removed: its group is deleted first, and Sales becomes Engineering in the same run.
    ws.writeDirectory({ users: people, groups: [{ ...sales, displayName: 'Engineering' }] });
    const removed = await apply(ws);
    expect(removed.plan.skipped).toEqual([]);
    expect(groups(sim)).toEqual(['Engineering: cat@example.com dan@example.com']);
    await expectConverged(ws);
  });

  it('three leavers, then a typo in the entry of the last person left: the guard holds, says why, and nothing is deprovisioned', async () => {
    // Soak seed 302122 (ledger ownership): Leaver(0) three times, then EmailTypo(0).
    sim = await startSim();
    const people = FOUR_PEOPLE;
    const ws = createWorkspace(sim, { directory: dir(people) });
    await apply(ws);
    for (let left = 1; left <= 3; left++) {
      ws.writeDirectory(dir(people.slice(left)));
      await apply(ws);
    }
    expect(users(sim)).toEqual([
      'ann@example.com e-1 inactive',
      'bob@example.com e-2 inactive',
      'cat@example.com e-3 inactive',
      'dan@example.com e-4 active',
    ]);

    ws.writeDirectory(dir([{ ...(people[3] as DirUser), emails: 'not-an-e-mail' }]));
    const run = await apply(ws);
    expect(run.plan.guard.tripped).toBe(true);
    expect(run.plan.guard.reasons).toEqual(['the source returned no valid users (1 entry rejected) while 5 objects are managed']);
    expect(run.plan.summary.changes).toBe(0);
    expect(run.plan.protected.map((p) => p.externalId)).toEqual(['e-4']);
    expect(users(sim)).toContain('dan@example.com e-4 active');
    expect(groups(sim)).toEqual(['Engineering: dan@example.com']);
  });

  it('a typo takes the name of a colleague who then leaves, after an admin deleted the account of the typo entry: an identity conflict, the leaver keeps the account', async () => {
    // Soak seed 930464 (ledger ownership): DuplicateNameTypo(0), AdminEdit(5, delete), Leaver(0).
    sim = await startSim();
    const ann = user('e-1', 'ann@example.com');
    const bob = user('e-2', 'bob@example.com');
    const cat = user('e-3', 'cat@example.com');
    const ws = createWorkspace(sim, { directory: dir([ann, bob, cat]) });
    await apply(ws);
    const annAccount = byName(sim, 'ann@example.com').id;

    // bob's entry takes ann's userName (rejected: ann's entry comes first); an admin deletes bob's account.
    const bobAsAnn = { ...bob, userName: 'ann@example.com' };
    ws.writeDirectory(dir([ann, bobAsAnn, cat]));
    await apply(ws);
    sim.store.deleteUser(byName(sim, 'bob@example.com').id);

    // ann leaves: the source now gives ann@example.com to e-2, who has no account of their own.
    // ann's account stays ann's (deactivated); e-2 is an identity conflict, not a takeover.
    ws.writeDirectory(dir([bobAsAnn, cat]));
    const run = await apply(ws, { allowDeletes: true });
    expect(run.plan.users.deactivate.map((d) => [d.id, d.externalId])).toEqual([[annAccount, 'e-1']]);
    expect(run.plan.users.create).toEqual([]);
    expect(run.plan.users.update).toEqual([]);
    expect(run.plan.conflicts?.map((c) => [c.externalId, c.name, c.account.id, c.account.owner])).toEqual([
      ['e-2', 'ann@example.com', annAccount, 'e-1'],
    ]);
    expect(users(sim)).toEqual(['ann@example.com e-1 inactive', 'cat@example.com e-3 active']);
    expect(groups(sim)).toEqual(['Engineering: cat@example.com']);
    await expectConverged(ws);
  });
});
