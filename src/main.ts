/**
 * CLI entry point (bin/scim-audit-sync.mjs imports this, or dist/main.js once built).
 * Exit codes: see cli/exit-codes.ts. The process exits by itself once the command's
 * resources are closed, so buffered output is never cut off.
 */
import { CommanderError } from 'commander';
import { buildProgram, loadCommands } from './cli/program.ts';
import { exitCodeFor, formatError } from './cli/exit-codes.ts';

// `scim-audit-sync plan | head`: a reader that went away is not an error of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

const program = buildProgram(await loadCommands(process.argv.slice(2)));
try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Commander has already printed usage errors, help and the version; only the code is left.
  if (!(error instanceof CommanderError)) process.stderr.write(formatError(error, process.argv.includes('--debug')));
  process.exitCode = exitCodeFor(error);
}
