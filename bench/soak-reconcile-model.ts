/**
 * The reconcile model test (test/reconcile/model.property.test.ts) run long: more sequences,
 * longer ones, any seed, both ownership modes, both deprovisioning actions (deactivate, delete). Not a benchmark of speed: a soak that looks
 * for counterexamples CI's seeded run may not reach. A failure prints the shrunk sequence;
 * turn it into a named scenario test in test/reconcile/lifecycle/.
 *
 *   node bench/soak-reconcile-model.ts [--runs 300] [--steps 25] [--seed N] [--minutes 10]
 */
import { parseArgs } from 'node:util';
import { runModel } from '../test/reconcile/model/run-model.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '300' },
    steps: { type: 'string', default: '25' },
    seed: { type: 'string' },
    minutes: { type: 'string', default: '10' },
  },
});
const deadline = Date.now() + Number(values.minutes) * 60_000;
let seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;
let rounds = 0;
while (Date.now() < deadline) {
  for (const ownership of ['ledger', 'externalId'] as const) {
    for (const deprovision of ['deactivate', 'delete'] as const) {
      console.log(
        `seed ${seed}, ownership ${ownership}, deprovision ${deprovision}: ${values.runs} sequences of up to ${values.steps} steps`,
      );
      await runModel({ ownership, deprovision, seed, numRuns: Number(values.runs), maxCommands: Number(values.steps) });
    }
  }
  rounds++;
  seed++;
}
console.log(`no counterexample in ${rounds} round(s)`);
