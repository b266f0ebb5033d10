/**
 * The everyday lifecycle, one scene per event: joiner, mover, leaver, group rename, admin
 * drift and admin delete. Each asserts the exact platform state after apply and that the
 * next plan changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import {
  SCIM,
  createWorkspace,
  requestsTo,
  startSim,
  type DirUser,
  type Directory,
  type Workspace,
} from '../../helpers/reconcile-harness.ts';
import { apply, byName, expectConverged, groups, user, users } from './support.ts';

const staff = (): DirUser[] => [
  user('e-1', 'ana@example.com', { attributes: { department: 'Eng' } }),
  user('e-2', 'ben@example.com', { attributes: { department: 'Eng' } }),
  user('e-3', 'cy@example.com', { attributes: { department: 'Sales' } }),
  user('e-4', 'dee@example.com', { attributes: { department: 'Sales' } }),
  user('e-5', 'eve@example.com', { attributes: { department: 'Sales' } }),
];

function directory(list: DirUser[], eng: string[], sales: string[], engName = 'Engineering'): Directory {
  return {
    users: list,
    groups: [
      { externalId: 'g-eng', displayName: engName, members: eng },
      { externalId: 'g-sales', displayName: 'Sales', members: sales },
    ],
  };
}

describe('everyday lifecycle', () => {
  let sim: Simulator;
  let ws: Workspace;
  beforeEach(async () => {
    sim = await startSim();
    ws = createWorkspace(sim, {
      directory: directory(staff(), ['e-1', 'e-2'], ['e-3', 'e-4', 'e-5']),
      config: {
        provisioning: {
          mapping: { user: { 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department': 'attributes.department' } },
        },
      },
    });
    await apply(ws);
  });
  afterEach(() => sim.close());

  it('joiner: created active, with the attributes and groups of the source', async () => {
    const fay = user('e-6', 'fay@example.com', { givenName: 'Fay', familyName: 'Field', attributes: { department: 'Eng' } });
    ws.writeDirectory(directory([...staff(), fay], ['e-1', 'e-2', 'e-6'], ['e-3', 'e-4', 'e-5']));
    const run = await apply(ws);
    expect(run.plan.users.create.map((c) => c.externalId)).toEqual(['e-6']);
    expect(byName(sim, 'fay@example.com')).toMatchObject({
      externalId: 'e-6',
      active: true,
      name: { givenName: 'Fay', familyName: 'Field' },
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Eng' },
    });
    expect(groups(sim)).toEqual([
      'Engineering: ana@example.com ben@example.com fay@example.com',
      'Sales: cy@example.com dee@example.com eve@example.com',
    ]);
    expect(
      Object.values(ws.readLedger()?.users ?? {})
        .map((e) => e.externalId)
        .sort(),
    ).toEqual(['e-1', 'e-2', 'e-3', 'e-4', 'e-5', 'e-6']);
    await expectConverged(ws);
  });

  it('mover: department and group change in one run; the same account moves', async () => {
    const id = byName(sim, 'cy@example.com').id;
    const moved = staff().map((u) => (u.externalId === 'e-3' ? { ...u, attributes: { department: 'Eng' } } : u));
    ws.writeDirectory(directory(moved, ['e-1', 'e-2', 'e-3'], ['e-4', 'e-5']));
    const run = await apply(ws);
    expect(run.plan.users.update.map((u) => [u.id, u.changes.map((c) => c.path)])).toEqual([
      [id, ['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department']],
    ]);
    expect(run.result.membersAdded).toBe(1);
    expect(run.result.membersRemoved).toBe(1);
    expect(sim.store.getUser(id)).toMatchObject({ 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Eng' } });
    expect(groups(sim)).toEqual(['Engineering: ana@example.com ben@example.com cy@example.com', 'Sales: dee@example.com eve@example.com']);
    expect(sim.store.counts().users).toBe(5);
    await expectConverged(ws);
  });

  it('leaver: deactivated (not deleted) and removed from every group', async () => {
    const id = byName(sim, 'eve@example.com').id;
    ws.writeDirectory(directory(staff().slice(0, 4), ['e-1', 'e-2'], ['e-3', 'e-4']));
    const run = await apply(ws);
    expect(run.plan.users.deactivate).toEqual([{ id, externalId: 'e-5', userName: 'eve@example.com', reason: 'not-in-source' }]);
    expect(users(sim)).toEqual([
      'ana@example.com e-1 active',
      'ben@example.com e-2 active',
      'cy@example.com e-3 active',
      'dee@example.com e-4 active',
      'eve@example.com e-5 inactive',
    ]);
    expect(groups(sim)).toEqual(['Engineering: ana@example.com ben@example.com', 'Sales: cy@example.com dee@example.com']);
    expect(ws.readLedger()?.users[id]?.deactivatedAt).toBeTypeOf('number');
    await expectConverged(ws);
  });

  it('group rename: the same group gets the new name and keeps its members', async () => {
    const id = sim.store.getGroupByDisplayName('Engineering')?.id;
    ws.writeDirectory(directory(staff(), ['e-1', 'e-2'], ['e-3', 'e-4', 'e-5'], 'R&D'));
    const run = await apply(ws);
    expect(run.plan.groups.update.map((g) => [g.id, g.changes])).toEqual([
      [id, [{ path: 'displayName', before: 'Engineering', after: 'R&D' }]],
    ]);
    expect(run.plan.groups.create).toEqual([]);
    expect(groups(sim)).toEqual(['R&D: ana@example.com ben@example.com', 'Sales: cy@example.com dee@example.com eve@example.com']);
    await expectConverged(ws);
  });

  it('admin drift: an admin edits a managed user and a managed group on the platform; both are reverted', async () => {
    const ana = byName(sim, 'ana@example.com');
    sim.store.updateUser(ana.id, { displayName: 'Ana (edited by an admin)', name: { givenName: 'Anna', familyName: 'e-1' } });
    const sales = sim.store.getGroupByDisplayName('Sales');
    sim.store.updateGroup(sales?.id ?? '', {
      members: (sales?.members ?? []).filter((m) => m.value !== byName(sim, 'dee@example.com').id),
    });
    const run = await apply(ws);
    expect(run.plan.users.update.map((u) => u.changes.map((c) => c.path).sort())).toEqual([['displayName', 'name.givenName']]);
    expect(byName(sim, 'ana@example.com')).toMatchObject({ displayName: 'ana e-1', name: { givenName: 'ana', familyName: 'e-1' } });
    expect(groups(sim)).toEqual(['Engineering: ana@example.com ben@example.com', 'Sales: cy@example.com dee@example.com eve@example.com']);
    await expectConverged(ws);
  });

  it('admin delete: an admin deletes a managed user; the absence is confirmed by id, the user recreated and the ledger updated', async () => {
    const old = byName(sim, 'ben@example.com').id;
    sim.store.deleteUser(old);
    sim.clearRequests();
    const run = await apply(ws);
    expect(requestsTo(sim, 'GET', `${SCIM}/Users/${old}`).map((r) => r.status)).toEqual([404]);
    expect(run.plan.users.create.map((c) => c.externalId)).toEqual(['e-2']);
    const fresh = byName(sim, 'ben@example.com').id;
    expect(fresh).not.toBe(old);
    const ledger = ws.readLedger();
    expect(ledger?.users[old]).toBeUndefined();
    expect(ledger?.users[fresh]).toEqual({ externalId: 'e-2' });
    expect(users(sim)).toHaveLength(5);
    expect(groups(sim)).toEqual(['Engineering: ana@example.com ben@example.com', 'Sales: cy@example.com dee@example.com eve@example.com']);
    await expectConverged(ws);
  });
});
