import { describe, expect, it } from 'vitest';
import { provisioningSchema } from '../../src/config/schema.ts';
import type { DesiredState, NormalizedUser } from '../../src/identity/model.ts';
import { Ledger } from '../../src/reconcile/ledger.ts';
import { buildPlan } from '../../src/reconcile/planner.ts';
import { planPhases } from '../../src/reconcile/tasks.ts';
import type { ScimGroup, ScimUser } from '../../src/platform/scim/types.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');

function cfg(extra: Record<string, unknown> = {}) {
  return provisioningSchema.parse({ source: { type: 'file', path: 'x.yaml' }, ...extra });
}

function user(ext: string, extra: Partial<NormalizedUser> = {}): NormalizedUser {
  return {
    externalId: ext,
    userName: `${ext}@example.com`,
    givenName: 'G',
    familyName: ext,
    emails: [`${ext}@example.com`],
    active: true,
    attributes: {},
    ...extra,
  };
}

function scimUser(id: string, ext: string | undefined, extra: Partial<ScimUser> = {}): ScimUser {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    id,
    ...(ext ? { externalId: ext } : {}),
    userName: `${ext ?? id}@example.com`,
    name: { givenName: 'G', familyName: ext ?? id },
    displayName: `G ${ext ?? id}`,
    emails: [{ value: `${ext ?? id}@example.com`, type: 'work', primary: true }],
    active: true,
    ...extra,
  };
}

function desired(users: NormalizedUser[], groups: DesiredState['groups'] = []): DesiredState {
  return { users, groups, rejected: [], stats: {} };
}

function plan(opts: {
  users: NormalizedUser[];
  groups?: DesiredState['groups'];
  platformUsers?: ScimUser[];
  platformGroups?: ScimGroup[];
  ledger?: Ledger;
  config?: ReturnType<typeof cfg>;
  allowDeletes?: boolean;
  now?: number;
}) {
  return buildPlan({
    tenant: 't',
    source: 'test',
    desired: desired(opts.users, opts.groups ?? []),
    platformUsers: opts.platformUsers ?? [],
    platformGroups: opts.platformGroups ?? [],
    ledger: opts.ledger ?? new Ledger(),
    config: opts.config ?? cfg(),
    allowDeletes: opts.allowDeletes ?? false,
    now: opts.now ?? NOW,
  });
}

describe('planner', () => {
  it('creates missing users and groups with memberships by externalId', () => {
    const p = plan({ users: [user('a'), user('b')], groups: [{ externalId: 'g1', displayName: 'Eng', members: ['a', 'b', 'zz'] }] });
    expect(p.users.create.map((u) => u.userName)).toEqual(['a@example.com', 'b@example.com']);
    expect(p.groups.create).toHaveLength(1);
    expect(p.memberships[0]?.add.map((m) => m.externalId)).toEqual(['a', 'b']);
    expect(p.skipped).toContainEqual(expect.objectContaining({ kind: 'member', ref: 'Eng ← zz' }));
    expect(p.summary.changes).toBe(2 + 1 + 2);
  });

  it('matches by externalId first, then userName case-insensitively', () => {
    const ledger = new Ledger();
    ledger.record('user', 'p1', 'a');
    ledger.record('user', 'p2', 'b');
    ledger.record('user', 'p3', 'c');
    const p = plan({
      users: [
        user('a', { userName: 'renamed@example.com' }),
        user('b', { userName: 'B@EXAMPLE.COM' }),
        user('d', { userName: 'd@example.com' }),
      ],
      platformUsers: [
        scimUser('p1', 'a'),
        scimUser('p2', 'b'),
        scimUser('p3', 'c'),
        scimUser('p4', undefined, { userName: 'd@example.com' }),
      ],
      ledger,
      config: cfg({ matching: { adoptExisting: true } }),
    });
    expect(p.users.create).toHaveLength(0);
    const byId = Object.fromEntries(p.users.update.map((u) => [u.id, u]));
    expect(byId['p1']?.changes.map((c) => c.path)).toContain('userName');
    // userName matched case-insensitively, but written exactly: the case-only rename is applied (issue #14).
    expect(byId['p2']?.changes).toEqual([{ path: 'userName', before: 'b@example.com', after: 'B@EXAMPLE.COM' }]);
    // An account nobody owns is adopted by name (adoptExisting).
    expect(byId['p4']?.adopt).toBe(true);
    expect(byId['p4']?.changes).toContainEqual(expect.objectContaining({ path: 'externalId', after: 'd' }));
  });

  it("a new externalId with the userName of an absent person's account: an identity conflict, never a match", () => {
    const ledger = new Ledger();
    ledger.record('user', 'p1', 'a');
    ledger.record('user', 'p2', 'b');
    // p3: not in the ledger, but its platform externalId names another person (c).
    const platformUsers = [scimUser('p1', 'a'), scimUser('p2', 'b'), scimUser('p3', 'c')];
    const users = [user('a'), user('b-new', { userName: 'B@example.com' }), user('c-new', { userName: 'c@example.com' })];
    for (const adoptExisting of [false, true]) {
      const p = plan({ users, platformUsers, ledger, config: cfg({ matching: { adoptExisting } }) });
      expect(p.users.update).toEqual([]);
      expect(p.users.create).toEqual([]);
      expect(p.users.deactivate.map((d) => [d.id, d.externalId])).toEqual([['p2', 'b']]);
      expect(p.conflicts?.map((c) => [c.externalId, c.wants, c.account.id, c.account.owner])).toEqual([
        ['b-new', 'create', 'p2', 'b'],
        ['c-new', 'create', 'p3', 'c'],
      ]);
      expect(p.conflicts?.[0]?.waysOut).toContainEqual(expect.stringContaining('ledger reassign --from b --to b-new'));
      // p3 is not managed: reassign cannot help, the ways out say what can.
      expect(p.conflicts?.[1]?.waysOut).toEqual([
        expect.stringContaining('not managed by this tool: delete platform user p3 by hand'),
        expect.stringContaining("clear or correct the account's externalId on the platform"),
      ]);
      expect(p.summary.conflicts).toBe(2);
    }
    // A present person renamed onto the held name: the rename waits (skipped) and is a conflict too.
    const renamed = plan({ users: [user('a', { userName: 'b@example.com' })], platformUsers, ledger });
    expect(renamed.users.update).toEqual([]);
    expect(renamed.skipped.map((k) => k.ref)).toContain('a@example.com');
    expect(renamed.conflicts?.map((c) => [c.externalId, c.wants, c.account.id])).toEqual([['a', 'rename', 'p2']]);
    // Opted in: the account is handed over, marked as such.
    const opted = plan({ users, platformUsers, ledger, config: cfg({ matching: { handOverLeaverAccountsByName: true } }) });
    expect(opted.users.update.map((u) => [u.id, u.externalId, u.handoverFrom])).toEqual([['p2', 'b-new', 'b']]);
    expect(opted.conflicts).toEqual([]);
  });

  it('never touches unmanaged platform objects unless adoption is enabled', () => {
    const platformUsers = [scimUser('p1', 'a'), scimUser('p9', 'stranger')];
    const p = plan({ users: [user('a')], platformUsers });
    expect(p.users.update).toHaveLength(0);
    expect(p.users.deactivate).toHaveLength(0);
    expect(p.skipped[0]?.reason).toMatch(/not managed/);
    const adopted = plan({ users: [user('a')], platformUsers, config: cfg({ matching: { adoptExisting: true } }) });
    expect(adopted.users.update).toEqual([expect.objectContaining({ id: 'p1', adopt: true })]);
    expect(adopted.users.deactivate).toHaveLength(0); // p9 is still not ours
  });

  it('adopts a platform object whose create was pending (crash between POST and ledger write)', () => {
    const ledger = new Ledger();
    ledger.markPending('user', 'a');
    const p = plan({ users: [user('a')], platformUsers: [scimUser('p1', 'a')], ledger });
    expect(p.skipped).toHaveLength(0);
    expect(p.users.create).toHaveLength(0);
  });

  it('deprovisions managed users per action and reactivates returning users', () => {
    const ledger = new Ledger();
    ['a', 'b', 'c'].forEach((x, i) => ledger.record('user', `p${i}`, x));
    const platformUsers = [scimUser('p0', 'a'), scimUser('p1', 'b'), scimUser('p2', 'c', { active: false })];
    const big = { maxDeletes: 100, maxDeletePercent: 100 };
    const deact = plan({ users: [user('a'), user('c')], platformUsers, ledger, config: cfg({ guards: big }) });
    expect(deact.users.deactivate).toEqual([expect.objectContaining({ id: 'p1', reason: 'not-in-source' })]);
    expect(deact.users.reactivate).toEqual([expect.objectContaining({ id: 'p2' })]);
    const del = plan({
      users: [user('a'), user('c')],
      platformUsers,
      ledger,
      config: cfg({ guards: big, deprovision: { action: 'delete' } }),
    });
    expect(del.users.delete.map((u) => u.id)).toEqual(['p1']);
    const none = plan({
      users: [user('a'), user('c')],
      platformUsers,
      ledger,
      config: cfg({ guards: big, deprovision: { action: 'none' } }),
    });
    expect(none.users.deactivate.length + none.users.delete.length).toBe(0);
  });

  it('deactivates users disabled in the source and deletes after the grace period', () => {
    const ledger = new Ledger();
    ledger.record('user', 'p0', 'a');
    ledger.record('user', 'p1', 'gone');
    ledger.setDeactivated('p1', NOW - 31 * 86_400_000);
    const config = cfg({ guards: { maxDeletes: 100, maxDeletePercent: 100 }, deprovision: { action: 'deactivate', deleteAfterDays: 30 } });
    const p = plan({
      users: [user('a', { active: false })],
      platformUsers: [scimUser('p0', 'a'), scimUser('p1', 'gone', { active: false })],
      ledger,
      config,
    });
    expect(p.users.deactivate).toEqual([expect.objectContaining({ id: 'p0', reason: 'disabled-in-source' })]);
    expect(p.users.delete).toEqual([expect.objectContaining({ id: 'p1', reason: 'grace-period-expired' })]);
  });

  it('a colleague renamed onto the userName of an account whose grace period ends in this run: the delete frees it first (phase name-deletes)', () => {
    const ledger = new Ledger();
    ledger.record('user', 'p1', 'gone');
    ledger.record('user', 'p2', 'b');
    const platformUsers = [scimUser('p1', 'gone', { active: false }), scimUser('p2', 'b')];
    const renamed = user('b', { userName: 'gone@example.com' });
    const config = cfg({ guards: { maxDeletes: 100, maxDeletePercent: 100 }, deprovision: { action: 'deactivate', deleteAfterDays: 30 } });
    // Inside the grace period the deactivated account keeps the name, and the plan says what frees it.
    ledger.setDeactivated('p1', NOW - 29 * 86_400_000);
    const waiting = plan({ users: [renamed], platformUsers, ledger, config });
    expect(waiting.users.delete).toEqual([]);
    expect(waiting.users.update).toEqual([]);
    expect(waiting.skipped.map((k) => k.reason)).toEqual([
      'userName change to gone@example.com not applied: platform user p1 (gone@example.com), a deactivated account that keeps its userName until it is deleted (provisioning.deprovision.deleteAfterDays, or by hand)',
    ]);
    // The day the grace period ends, the delete runs first and the rename lands in the same run.
    ledger.setDeactivated('p1', NOW - 31 * 86_400_000);
    const freed = plan({ users: [renamed], platformUsers, ledger, config });
    expect(freed.skipped).toEqual([]);
    expect(freed.users.delete).toEqual([expect.objectContaining({ id: 'p1', reason: 'grace-period-expired', freesName: true })]);
    expect(planPhases(freed).map((ph) => [ph.name, ph.tasks.map((t) => `${t.action} ${'id' in t ? t.id : ''}`)])).toEqual([
      ['name-deletes', ['user.delete p1']],
      ['users', ['user.update p2']],
      ['groups', []],
      ['memberships', []],
      ['group-deletes', []],
      ['user-removals', []],
    ]);
  });

  it('trips the guard on maxDeletes, maxDeletePercent and an empty source', () => {
    const ledger = new Ledger();
    const platformUsers = Array.from({ length: 10 }, (_, i) => scimUser(`p${i}`, `u${i}`));
    platformUsers.forEach((u) => ledger.record('user', u.id, u.externalId as string));
    const keep = (n: number) => platformUsers.slice(0, n).map((u) => user(u.externalId as string));
    expect(
      plan({ users: keep(8), platformUsers, ledger, config: cfg({ guards: { maxDeletes: 1, maxDeletePercent: 100 } }) }).guard,
    ).toMatchObject({ tripped: true, destructive: 2 });
    expect(
      plan({ users: keep(8), platformUsers, ledger, config: cfg({ guards: { maxDeletes: 100, maxDeletePercent: 10 } }) }).guard.tripped,
    ).toBe(true);
    expect(
      plan({ users: keep(8), platformUsers, ledger, config: cfg({ guards: { maxDeletes: 100, maxDeletePercent: 25 } }) }).guard.tripped,
    ).toBe(false);
    const empty = plan({ users: [], platformUsers, ledger, config: cfg({ guards: { maxDeletes: 1000, maxDeletePercent: 100 } }) });
    expect(empty.guard.tripped).toBe(true);
    expect(empty.guard.reasons.join()).toMatch(/no users/);
    const overridden = plan({ users: [], platformUsers, ledger, allowDeletes: true });
    expect(overridden.guard).toMatchObject({ tripped: false, overridden: true });
  });

  it('applies scoping filters case-insensitively and labels out-of-scope removals', () => {
    const ledger = new Ledger();
    ledger.record('user', 'p0', 'c1');
    const users = [user('e1', { attributes: { title: 'Engineer' } }), user('c1', { attributes: { title: 'Senior contractor' } })];
    const p = plan({
      users,
      platformUsers: [scimUser('p0', 'c1')],
      ledger,
      config: cfg({
        scope: { users: 'active eq true and not (title co "Contractor")' },
        guards: { maxDeletes: 10, maxDeletePercent: 100 },
      }),
    });
    expect(p.users.create.map((u) => u.externalId)).toEqual(['e1']);
    expect(p.users.deactivate).toEqual([expect.objectContaining({ id: 'p0', reason: 'out-of-scope' })]);
  });

  it('plans exact membership deltas and group renames for managed groups', () => {
    const ledger = new Ledger();
    ['a', 'b', 'c'].forEach((x) => ledger.record('user', `p-${x}`, x));
    ledger.record('group', 'g1', 'eng');
    const p = plan({
      users: [user('a'), user('b'), user('c')],
      groups: [{ externalId: 'eng', displayName: 'Engineering', members: ['a', 'c'] }],
      platformUsers: [scimUser('p-a', 'a'), scimUser('p-b', 'b'), scimUser('p-c', 'c')],
      platformGroups: [
        { schemas: [], id: 'g1', externalId: 'eng', displayName: 'Eng', members: [{ value: 'p-a' }, { value: 'p-b' }, { value: 'p-x' }] },
      ],
      ledger,
    });
    expect(p.groups.update[0]?.changes).toEqual([{ path: 'displayName', before: 'Eng', after: 'Engineering' }]);
    expect(p.memberships[0]?.add.map((m) => m.id)).toEqual(['p-c']);
    // p-x is no user this tool knows (not listed, not in the ledger): kept, never removed (issue #14).
    expect(p.memberships[0]?.remove.map((m) => m.id).sort()).toEqual(['p-b']);
  });

  it('maps extra attributes with transforms, templates, constants and create-only values', () => {
    const config = cfg({
      mapping: {
        user: {
          'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department': 'attributes.department',
          title: { from: 'attributes.title', transform: 'upper' },
          nickName: { template: '{givenName}.{familyName}' },
          'urn:example:params:scim:schemas:extension:acme:2.0:User:costCenter': { value: 'CC-1' },
          preferredLanguage: { value: 'en', createOnly: true },
        },
      },
    });
    const p = plan({ users: [user('a', { attributes: { department: 'R&D', title: 'eng' } })], config });
    const r = p.users.create[0]?.resource as Record<string, unknown>;
    expect(r['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User']).toEqual({ department: 'R&D' });
    expect(r['title']).toBe('ENG');
    expect(r['nickName']).toBe('G.a');
    expect(r['preferredLanguage']).toBe('en');
    expect((r['schemas'] as string[]).length).toBe(3);
    // A later drift in a create-only attribute is not corrected.
    const ledger = new Ledger();
    ledger.record('user', 'p0', 'a');
    const existing = scimUser('p0', 'a', {
      title: 'ENG',
      nickName: 'G.a',
      preferredLanguage: 'fr',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Sales' },
      'urn:example:params:scim:schemas:extension:acme:2.0:User': { costCenter: 'CC-1' },
    });
    const again = plan({
      users: [user('a', { attributes: { department: 'R&D', title: 'eng' } })],
      platformUsers: [existing],
      ledger,
      config,
    });
    expect(again.users.update[0]?.changes.map((c) => c.path)).toEqual([
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
    ]);
  });

  it('membership additive never removes; authoritative removes movers and leavers but keeps members it cannot place', () => {
    const ledger = new Ledger();
    ['a', 'b', 'gone'].forEach((x) => ledger.record('user', `p-${x}`, x));
    ledger.record('group', 'g1', 'eng');
    const platformUsers = [scimUser('p-a', 'a'), scimUser('p-b', 'b'), scimUser('p-gone', 'gone'), scimUser('p-admin', undefined)];
    const input = {
      users: [user('a'), user('b')],
      groups: [{ externalId: 'eng', displayName: 'Eng', members: ['a'] }],
      platformUsers,
      platformGroups: [
        {
          schemas: [],
          id: 'g1',
          externalId: 'eng',
          displayName: 'Eng',
          members: [{ value: 'p-a' }, { value: 'p-b' }, { value: 'p-gone' }, { value: 'p-admin' }],
        },
      ],
      ledger,
    };
    const big = { maxDeletes: 100, maxDeletePercent: 100, maxMemberRemovals: 100, maxMemberRemovalPercent: 100 };
    const auth = plan({ ...input, config: cfg({ guards: big }) });
    expect(auth.membership).toBe('authoritative');
    expect(auth.memberships[0]?.remove.map((m) => m.id).sort()).toEqual(['p-b', 'p-gone']);
    const add = plan({ ...input, config: cfg({ guards: big, membership: 'additive' }) });
    expect(add.memberships).toEqual([]);
    expect(add.users.deactivate.map((u) => u.id)).toEqual(['p-gone']);
  });

  it('a chain of renames and a create taking a freed name go through temporary names; a rename onto a name that does not move is left out', () => {
    const ledger = new Ledger();
    ['a', 'b', 'c'].forEach((x) => ledger.record('user', `p-${x}`, x));
    const platformUsers = [
      scimUser('p-a', 'a'),
      scimUser('p-b', 'b'),
      scimUser('p-c', 'c'),
      scimUser('p-x', undefined, { userName: 'x@example.com' }),
    ];
    const p = plan({
      // b takes a's name, a takes a new one, n (new) takes b's name, c wants x@ (held by an unmanaged account).
      users: [
        user('a', { userName: 'a2@example.com' }),
        user('b', { userName: 'a@example.com' }),
        user('n', { userName: 'b@example.com' }),
        user('c', { userName: 'x@example.com' }),
      ],
      platformUsers,
      ledger,
    });
    const via = Object.fromEntries(p.users.update.map((u) => [u.id, u.renameVia]));
    expect(via['p-a']).toMatch(/^renaming-[0-9a-f]{8}\.a2@example\.com$/);
    expect(via['p-b']).toMatch(/^renaming-[0-9a-f]{8}\.a@example\.com$/);
    expect(p.users.create.map((c) => c.externalId)).toEqual(['n']);
    // Its only change was the name: nothing left to update.
    expect(p.users.update.find((u) => u.id === 'p-c')).toBeUndefined();
    expect(p.skipped).toContainEqual(
      expect.objectContaining({
        kind: 'user',
        ref: 'c@example.com',
        reason: expect.stringContaining('userName change to x@example.com not applied'),
      }),
    );
  });

  it('an unidentified group rejection holds group deletions; an identified one protects its group', () => {
    const ledger = new Ledger();
    ledger.record('user', 'p-a', 'a');
    ledger.record('group', 'g1', 'eng');
    ledger.record('group', 'g2', 'ops');
    const platformGroups = [
      { schemas: [], id: 'g1', externalId: 'eng', displayName: 'Eng', members: [] },
      { schemas: [], id: 'g2', externalId: 'ops', displayName: 'Ops', members: [] },
    ];
    const base = {
      users: [user('a')],
      platformUsers: [scimUser('p-a', 'a')],
      platformGroups,
      ledger,
      config: cfg({ guards: { maxDeletes: 100, maxDeletePercent: 100 } }),
    };
    const blind = buildPlan({
      tenant: 't',
      source: 's',
      desired: { users: [user('a')], groups: [], rejected: [{ kind: 'group', ref: 'groups[0]', reason: 'x' }], stats: {} },
      platformUsers: base.platformUsers,
      platformGroups,
      ledger,
      config: base.config,
      allowDeletes: false,
      now: NOW,
    });
    expect(blind.groups.delete).toHaveLength(2);
    expect(blind.guard.tripped).toBe(true);
    expect(blind.guard.reasons.join()).toMatch(/1 source group entries were rejected without a readable identity/);
    const named = buildPlan({
      tenant: 't',
      source: 's',
      desired: {
        users: [user('a')],
        groups: [],
        rejected: [{ kind: 'group', ref: 'groups[0]', reason: 'x', displayName: 'OPS' }],
        stats: {},
      },
      platformUsers: base.platformUsers,
      platformGroups,
      ledger,
      config: base.config,
      allowDeletes: false,
      now: NOW,
    });
    expect(named.groups.delete.map((g) => g.id)).toEqual(['g1']);
    expect(named.protected).toEqual([expect.objectContaining({ kind: 'group', id: 'g2' })]);
    expect(named.guard.tripped).toBe(false);
  });
});
