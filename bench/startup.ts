/**
 * `node bench/startup.ts`: the CLI's start-up memory (bench/lib/startup.ts) on its own, for
 * iterating on what the CLI loads. bench:reconcile reports the same figures in its section of
 * bench/RESULTS.md; this runner writes nothing.
 */
import { describeMachine } from './lib/machine.ts';
import { measureStartup } from './lib/startup.ts';

process.stdout.write(`bench:startup — ${describeMachine()}\n`);
const metrics = await measureStartup();
for (const m of metrics) process.stdout.write(`${m.pass ? 'PASS' : 'FAIL'}  ${m.name}: ${m.value} (target ${m.target})\n`);
process.exitCode = metrics.every((m) => m.pass) ? 0 : 1;
