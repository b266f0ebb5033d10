/**
 * Standalone launcher for the simulator (`node src/cli/simulator-entry.ts --port 0 …`), so
 * tests and benchmarks can run it in a separate process without the main program. It lives
 * in cli/ because it is a command line: the simulator itself never imports the CLI.
 */
import { addGlobalOptions } from './options.ts';
import { simulateCommand } from './simulate.ts';

await addGlobalOptions(simulateCommand()).parseAsync(process.argv);
