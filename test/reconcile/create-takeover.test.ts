/**
 * A create that meets an existing object (409) never takes over an account the tool manages
 * for another person — also with adoptExisting on. Rename plus new hire in one run: while
 * emp-100's rename away from alice@ is still pending, the create of the new hire alice@ (emp-200)
 * gets a 409 and finds emp-100's account; it must fail (and converge on the next run), not
 * record emp-100's account as emp-200's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/errors.ts';
import { SCHEMA_USER } from '../../src/platform/scim/types.ts';
import { Ledger } from '../../src/reconcile/ledger.ts';
import { executeTask } from '../../src/reconcile/tasks.ts';
import { rejection } from '../helpers/rejection.ts';
import { scimHarness, type ScimHarness } from '../platform/helpers/scim.ts';

let h: ScimHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const createAlice = {
  action: 'user.create' as const,
  externalId: 'emp-200',
  name: 'alice@example.com',
  resource: { schemas: [SCHEMA_USER], userName: 'alice@example.com', externalId: 'emp-200', active: true },
};

describe('create meeting an existing account', () => {
  for (const adoptExisting of [false, true]) {
    it(`rename plus new hire: the 409 finds the account managed for emp-100, which is not taken over (adoptExisting ${adoptExisting})`, async () => {
      h = await scimHarness();
      const old = h.sim.store.createUser({ userName: 'alice@example.com', externalId: 'emp-100', active: true });
      const ledger = new Ledger();
      ledger.record('user', old.id, 'emp-100');
      const err = await rejection(executeTask(createAlice, { target: h.scim, ledger, adoptExisting, now: Date.now }));
      expect(err.code).toBe(ErrorCodes.CONFLICT);
      expect(err.message).toContain('which this tool manages for another source object');
      expect(ledger.idFor('user', 'emp-200')).toBeUndefined();
      expect(ledger.get('user', old.id)?.externalId).toBe('emp-100');
    });
  }

  it('an unmanaged account with the name is adopted only with adoptExisting', async () => {
    h = await scimHarness();
    const hand = h.sim.store.createUser({ userName: 'alice@example.com', active: true });
    const ledger = new Ledger();
    const refused = await rejection(executeTask(createAlice, { target: h.scim, ledger, adoptExisting: false, now: Date.now }));
    expect(refused.message).toContain('adoptExisting: true');
    const done = await executeTask(createAlice, { target: h.scim, ledger, adoptExisting: true, now: Date.now });
    expect(done).toMatchObject({ action: 'user.adopt', id: hand.id });
    expect(ledger.idFor('user', 'emp-200')).toBe(hand.id);
  });
});
