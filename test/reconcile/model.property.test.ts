/**
 * Model-based property test of the reconcile rules (docs/reconcile.md): random sequences of
 * lifecycle events and admin edits run through plan → apply → plan against the simulator
 * over a socket, with the promises of the docs checked after every step (see
 * model/system.ts). Seeded and bounded for CI; `npm run soak:reconcile` runs it longer.
 * A shrunk counterexample becomes a named scenario test in test/reconcile/lifecycle/.
 */
import { describe, it } from 'vitest';
import { runModel } from './model/run-model.ts';

describe('reconcile model: every lifecycle sequence keeps the documented promises', () => {
  for (const ownership of ['ledger', 'externalId'] as const) {
    it(`ownership.mode ${ownership}`, async () => {
      await runModel({ ownership, seed: ownership === 'ledger' ? 20261125 : 1125, numRuns: 25, maxCommands: 12 });
    }, 180_000);
  }
  // A deleted leaver's return is a new account; a recycled name is free once the leaver's account is deleted.
  it('ownership.mode ledger, deprovision.action delete', async () => {
    await runModel({ ownership: 'ledger', deprovision: 'delete', seed: 20261128, numRuns: 15, maxCommands: 12 });
  }, 180_000);
});
