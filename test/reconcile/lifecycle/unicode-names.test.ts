/**
 * One canonical form per name, end to end against the simulator: names that read the same
 * (NFC and NFD spellings, case-fold partners such as the Kelvin sign or ß) are one name in
 * duplicate detection and in matching, and what is written is the source's text in NFC.
 * The simulator itself compares names with plain lower-casing, like many SCIM servers: it
 * would happily hold `josé` twice, so every check below is the tool's own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, type DirUser, type Directory } from '../../helpers/reconcile-harness.ts';
import { apply, expectConverged, groups, user, users } from './support.ts';

const NFC = 'jos\u00e9@example.com';
const NFD = 'jose\u0301@example.com';

const dir = (list: DirUser[], groupList: Directory['groups'] = []): Directory => ({ users: list, groups: groupList });

describe('unicode names', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('josé in NFC and in NFD are one account: the later entry is rejected naming the kept one', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: dir([user('u-1', NFC), user('u-2', NFD)]) });
    const run = await apply(ws);
    expect(run.plan.users.create.map((c) => c.externalId)).toEqual(['u-1']);
    expect(run.plan.rejected).toEqual([
      expect.objectContaining({
        kind: 'user',
        externalId: 'u-2',
        reason: `duplicate userName "${NFD}" (the same name as "${NFC}" after Unicode normalization and case folding): already used by users[0] (externalId u-1); the first entry is kept`,
      }),
    ]);
    expect(users(sim)).toEqual([`${NFC} u-1 active`]);
    await expectConverged(ws);
  });

  it('a source spelling in NFD is written in NFC', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: dir([user('u-1', NFD, { displayName: 'Jose\u0301 Nu\u0301n\u0303ez' })]) });
    await apply(ws);
    const created = sim.store.users()[0];
    expect(created?.userName).toBe(NFC);
    expect(created?.displayName).toBe('Jos\u00e9 N\u00fa\u00f1ez');
    expect(created?.emails?.map((e) => e.value)).toEqual([NFC]);
    await expectConverged(ws);
  });

  it('a managed account whose name was respelled in NFD on the platform is renamed back to the NFC text', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: dir([user('u-1', NFC)]) });
    await apply(ws);
    const id = sim.store.users()[0]?.id as string;
    sim.store.updateUser(id, { userName: NFD });
    const run = await apply(ws);
    expect(run.plan.users.create).toEqual([]);
    expect(run.plan.users.update).toEqual([expect.objectContaining({ id, changes: [{ path: 'userName', before: NFD, after: NFC }] })]);
    expect(users(sim)).toEqual([`${NFC} u-1 active`]);
    await expectConverged(ws);
  });

  it('an unmanaged platform account spelled in NFD is adopted by the NFC name (adoptExisting), not created a second time', async () => {
    sim = await startSim();
    const hand = sim.store.createUser({ userName: NFD, active: true });
    const ws = createWorkspace(sim, {
      directory: dir([user('u-1', NFC)]),
      config: { provisioning: { matching: { adoptExisting: true } } },
    });
    const run = await apply(ws);
    expect(run.plan.users.create).toEqual([]);
    expect(run.plan.users.update).toEqual([
      expect.objectContaining({
        id: hand.id,
        adopt: true,
        changes: expect.arrayContaining([{ path: 'userName', before: NFD, after: NFC }]),
      }),
    ]);
    expect(users(sim)).toEqual([`${NFC} u-1 active`]);
    await expectConverged(ws);
  });

  it('an unmanaged platform account with the NFD name is not taken over nor duplicated by an NFC create', async () => {
    sim = await startSim();
    sim.store.createUser({ userName: NFD, active: true });
    const ws = createWorkspace(sim, { directory: dir([user('u-1', NFC), user('u-2', 'ada@example.com')]) });
    const run = await ws.applyInProcess();
    expect(run.plan.users.create.map((c) => c.externalId)).toEqual(['u-2']);
    expect(run.plan.skipped).toEqual([expect.objectContaining({ kind: 'user', code: 'unmanaged' })]);
    expect(users(sim)).toEqual(['ada@example.com u-2 active', `${NFD} - active`]);
  });

  it.each([
    ['the Kelvin sign', '\u212Aurt@example.com', 'kurt@example.com'],
    ['sharp s', 'stra\u00dfe@example.com', 'STRASSE@example.com'],
    ['capital sharp s', '\u1E9Ee@example.com', 'sse@example.com'],
    [
      'final sigma',
      '\u039F\u0394\u03A5\u03A3\u03A3\u0395\u03A5\u03A3@example.com',
      '\u03BF\u03B4\u03C5\u03C3\u03C3\u03B5\u03C5\u03C2@example.com',
    ],
  ])('case-fold partners (%s) are one account', async (_what, first, second) => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: dir([user('u-1', first), user('u-2', second)]) });
    const run = await apply(ws);
    expect(run.plan.rejected).toEqual([
      expect.objectContaining({
        externalId: 'u-2',
        reason: expect.stringMatching(/^duplicate userName .*: already used by users\[0\] \(externalId u-1\); the first entry is kept$/),
      }),
    ]);
    expect(users(sim)).toEqual([`${first.normalize('NFC')} u-1 active`]); // the Kelvin sign is K in NFC
    await expectConverged(ws);
  });

  it('group names that fold to one name are one group', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: dir(
        [user('u-1', 'ada@example.com')],
        [
          { externalId: 'g-1', displayName: 'Stra\u00dfe', members: ['u-1'] },
          { externalId: 'g-2', displayName: 'STRASSE', members: ['u-1'] },
        ],
      ),
    });
    const run = await apply(ws);
    expect(run.plan.rejected).toEqual([
      expect.objectContaining({
        kind: 'group',
        externalId: 'g-2',
        reason:
          'duplicate displayName "STRASSE" (the same name as "Straße" after Unicode normalization and case folding): already used by groups[0] (externalId g-1); the first entry is kept',
      }),
    ]);
    expect(groups(sim)).toEqual(['Straße: ada@example.com']);
  });

  it('a name that mixes scripts or reads as Latin gets one plan warning when it is written, and only then', async () => {
    sim = await startSim();
    const mixed = 'p\u0430ypal@example.com'; // Cyrillic а
    const ws = createWorkspace(sim, {
      directory: dir(
        [user('u-1', mixed), user('u-2', 'ada@example.com'), user('u-3', '\u0438\u0432\u0430\u043d@example.com')],
        [{ externalId: 'g-1', displayName: '\u0441\u043e\u0440\u0435', members: ['u-2'] }], // Cyrillic "соре"
      ),
    });
    const run = await apply(ws);
    expect(run.plan.warnings).toEqual([
      {
        code: 'confusable-name',
        ref: mixed,
        message: `userName "p\u0430ypal" mixes scripts (Cyrillic, Latin): it can be read as another name; check that it is intended`,
      },
      {
        code: 'confusable-name',
        ref: '\u0441\u043e\u0440\u0435',
        message:
          'displayName "\u0441\u043e\u0440\u0435" is not Latin but reads as "cope": it can be read as another name; check that it is intended',
      },
    ]);
    // A single-script name (иван) is not reported; nothing is refused.
    expect(users(sim)).toHaveLength(3);
    const next = await expectConverged(ws);
    expect(next.warnings).toEqual([]);
  });
});
