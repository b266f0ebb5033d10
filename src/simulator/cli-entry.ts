/**
 * Standalone launcher for the simulator (`node src/simulator/cli-entry.ts --port 0 …`), so
 * tests and benchmarks can run it in a separate process without the main program.
 */
import { addGlobalOptions } from '../cli/options.ts';
import { simulateCommand } from '../cli/simulate.ts';

await addGlobalOptions(simulateCommand()).parseAsync(process.argv);
