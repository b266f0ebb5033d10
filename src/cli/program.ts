/**
 * The command-line program. `buildProgram()` has no side effects (tests build it without
 * running anything); src/main.ts parses process.argv with it.
 */
import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { addGlobalOptions } from './options.ts';

export type CommandFactory = () => Command;

interface CommandModule {
  /** The command names the module defines (matched against argv before anything loads). */
  names: readonly string[];
  load: () => Promise<CommandFactory[]>;
}

/**
 * Every subcommand, in the order `--help` lists them. Modules load on demand: only the module
 * of the command on the line (all of them for `--help`, none for `--version`), and a module
 * defines its commands and options only: what an action needs (the config loader, the engines,
 * the HTTP client, Redis) it imports when it runs, so `--help` loads none of it and `plan` no
 * LDAP client, BullMQ or ioredis (less start-up time and memory;
 * test/cli/lazy-imports.test.ts keeps it so).
 * To add one: create src/cli/<name>.ts exporting `<name>Command(): Command` (wrap its action in
 * `runCommand` from exit-codes.ts, `await import()` its dependencies inside it) and append an
 * entry here.
 */
const MODULES: readonly CommandModule[] = [
  { names: ['validate'], load: async () => [(await import('./validate.ts')).validateCommand] },
  {
    names: ['plan', 'apply'],
    load: async () => {
      const m = await import('./reconcile.ts');
      return [m.planCommand, m.applyCommand];
    },
  },
  { names: ['audit'], load: async () => [(await import('./audit.ts')).auditCommand] },
  { names: ['demo'], load: async () => [(await import('./demo.ts')).demoCommand] },
  { names: ['simulate'], load: async () => [(await import('./simulate.ts')).simulateCommand] },
  { names: ['simulate-google'], load: async () => [(await import('./simulate-google.ts')).simulateGoogleCommand] },
  { names: ['simulate-entra'], load: async () => [(await import('./simulate-entra.ts')).simulateEntraCommand] },
  { names: ['simulate-okta'], load: async () => [(await import('./simulate-okta.ts')).simulateOktaCommand] },
  { names: ['ledger'], load: async () => [(await import('./ledger.ts')).ledgerCommand] },
  { names: ['daemon'], load: async () => [(await import('./daemon.ts')).daemonCommand] },
  { names: ['watch'], load: async () => [(await import('./watch.ts')).watchCommand] },
  { names: ['log'], load: async () => [(await import('./log.ts')).logCommand] },
  {
    names: ['trigger', 'resume', 'approve-deletes', 'status'],
    load: async () => {
      const m = await import('./operator.ts');
      return [m.triggerCommand, m.resumeCommand, m.approveDeletesCommand, m.statusCommand];
    },
  },
];

/**
 * The command factories for a command line: only the named command's module when the line
 * names one; none for `--version` alone (commander prints it before any command would run);
 * else all of them (help, an unknown command and its suggestions).
 */
export async function loadCommands(args: readonly string[] = []): Promise<CommandFactory[]> {
  // The first command name on the line is the command; later ones are its arguments
  // (`trigger audit`, `status --tenant audit`). No global option takes a command name as value.
  const first = args.find((a) => MODULES.some((m) => m.names.includes(a)));
  const named = MODULES.find((m) => first !== undefined && m.names.includes(first));
  const version = args.some((a) => a === '-V' || a === '--version') && !args.some((a) => a === '-h' || a === '--help');
  const chosen = named ? [named] : version ? [] : MODULES;
  return (await Promise.all(chosen.map((m) => m.load()))).flat();
}

/** Commander does not pass settings (exit override, output, help-after-error) down to added commands, so copy them through the tree. */
export function inheritSettings(parent: Command, child: Command): void {
  child.copyInheritedSettings(parent);
  for (const grandchild of child.commands) inheritSettings(child, grandchild);
}

export function buildProgram(commands: readonly CommandFactory[]): Command {
  const program = new Command('scim-audit-sync')
    .description('Provision users and groups into the analytics platform over SCIM 2.0, and stream its audit log into SIEM sinks.')
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    // Usage errors surface as CommanderError; main.ts maps them to exit code 2.
    .exitOverride();
  addGlobalOptions(program);
  for (const make of commands) {
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
