/**
 * The command-line program. `buildProgram()` has no side effects (tests build it without
 * running anything); src/main.ts parses process.argv with it.
 */
import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { addGlobalOptions } from './options.ts';
import { validateCommand } from './validate.ts';
import { applyCommand, planCommand } from './reconcile.ts';
import { demoCommand } from './demo.ts';
import { simulateCommand } from './simulate.ts';
import { daemonCommand } from './daemon.ts';
import { approveDeletesCommand, resumeCommand, statusCommand, triggerCommand } from './operator.ts';
import { auditCommand } from './audit.ts';

/**
 * Every subcommand, in the order `--help` lists them.
 * To add one: create src/cli/<name>.ts exporting `<name>Command(): Command`
 * (wrap its action in `runCommand` from exit-codes.ts), import it above, append it here.
 */
export const COMMANDS: ReadonlyArray<() => Command> = [
  validateCommand,
  planCommand,
  applyCommand,
  auditCommand,
  demoCommand,
  simulateCommand,
  daemonCommand,
  triggerCommand,
  resumeCommand,
  approveDeletesCommand,
  statusCommand,
];

/** Commander does not pass settings (exit override, output, help-after-error) down to added commands, so copy them through the tree. */
export function inheritSettings(parent: Command, child: Command): void {
  child.copyInheritedSettings(parent);
  for (const grandchild of child.commands) inheritSettings(child, grandchild);
}

export function buildProgram(): Command {
  const program = new Command('scim-audit-sync')
    .description('Provision users and groups into the analytics platform over SCIM 2.0, and stream its audit log into SIEM sinks.')
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    // Usage errors surface as CommanderError; main.ts maps them to exit code 2.
    .exitOverride();
  addGlobalOptions(program);
  for (const make of COMMANDS) {
    const command = make();
    inheritSettings(program, command);
    program.addCommand(command);
  }
  program.addHelpText(
    'after',
    '\nExit codes: 0 success, 1 some operations failed, 2 configuration or usage error, 3 a safety guard tripped.',
  );
  return program;
}
