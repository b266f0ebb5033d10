import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, inheritSettings, loadCommands } from '../../src/cli/program.ts';
import { ExitCode, exitCodeFor, formatError, runCommand } from '../../src/cli/exit-codes.ts';
import { ConfigError, ErrorCodes, SourceError, SyncError, errorFromStatus } from '../../src/errors.ts';

describe('exit codes', () => {
  it('maps each class of failure to its documented code', () => {
    expect(exitCodeFor(new ConfigError('bad', ['x: y']))).toBe(ExitCode.CONFIG);
    expect(exitCodeFor(errorFromStatus(401, 'GET Users'))).toBe(ExitCode.CONFIG);
    expect(exitCodeFor(errorFromStatus(403, 'GET Users'))).toBe(ExitCode.CONFIG);
    expect(exitCodeFor(new SyncError(ErrorCodes.INSECURE_URL, 'fatal', 'http'))).toBe(ExitCode.CONFIG);
    expect(exitCodeFor(new SyncError(ErrorCodes.GUARD_TRIPPED, 'fatal', 'too many deletions'))).toBe(ExitCode.GUARD);
    expect(exitCodeFor(errorFromStatus(503, 'GET Users'))).toBe(ExitCode.FAILED);
    expect(exitCodeFor(new SourceError('ldap down'))).toBe(ExitCode.FAILED);
    expect(exitCodeFor(new TypeError('bug'))).toBe(ExitCode.FAILED);
    expect(exitCodeFor(new CommanderError(1, 'commander.unknownCommand', 'x'))).toBe(ExitCode.CONFIG);
    expect(exitCodeFor(new CommanderError(0, 'commander.helpDisplayed', 'x'))).toBe(ExitCode.OK);
  });

  it('prints `error [CODE]: message` and config issues, and a stack only with --debug', () => {
    const config = formatError(new ConfigError('config.yaml is invalid', ['platform.tokn: unknown key — did you mean "token"?']));
    expect(config).toBe('error [E_CONFIG_INVALID]: config.yaml is invalid\n  - platform.tokn: unknown key — did you mean "token"?\n');
    const bug = new TypeError('cannot read properties of undefined');
    expect(formatError(bug)).toBe(
      'error: cannot read properties of undefined\n  (unexpected error: run again with --debug for the stack trace)\n',
    );
    expect(formatError(bug, true)).toContain('at ');
    const wrapped = new SyncError(ErrorCodes.TRANSIENT, 'transient', 'GET Users: network error', { cause: new Error('ECONNRESET') });
    expect(formatError(wrapped)).toBe('error [E_TRANSIENT]: GET Users: network error\n');
    expect(formatError(wrapped, true)).toContain('caused by: Error: ECONNRESET');
  });

  it('runCommand sets the exit code from the return value or the thrown error', async () => {
    const saved = process.exitCode;
    const writes: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => {
      writes.push(chunk);
      return true;
    }) as typeof process.stderr.write;
    try {
      await runCommand(async () => 3)();
      expect(process.exitCode).toBe(3);
      await runCommand(async () => undefined)();
      expect(process.exitCode).toBe(0);
      await runCommand(async () => {
        throw new SyncError(ErrorCodes.GUARD_TRIPPED, 'fatal', 'would delete 40 users (limit 25)');
      })();
      expect(process.exitCode).toBe(ExitCode.GUARD);
      expect(writes.join('')).toBe('error [E_GUARD_TRIPPED]: would delete 40 users (limit 25)\n');
    } finally {
      process.stderr.write = write;
      process.exitCode = saved;
    }
  });
});

describe('program', () => {
  it('registers every command of the list, with the global options', async () => {
    const program = buildProgram(await loadCommands());
    expect(program.commands.map((c) => c.name())).toEqual([
      'validate',
      'plan',
      'apply',
      'audit',
      'demo',
      'simulate',
      'simulate-google',
      'simulate-entra',
      'simulate-okta',
      'ledger',
      'daemon',
      'watch',
      'log',
      'trigger',
      'resume',
      'approve-deletes',
      'status',
    ]);
    expect(program.commands.map((c) => c.name())).toContain('validate');
    expect(program.options.map((o) => o.long)).toEqual(expect.arrayContaining(['--version', '--debug', '--log-level', '--log-format']));
  });

  it('loads only the module of the command named on the line, and every module otherwise', async () => {
    const names = async (args: string[]) => (await loadCommands(args)).map((make) => make().name());
    expect(await names(['--log-level', 'warn', 'audit', 'export', '--config', 'c.yaml'])).toEqual(['audit']);
    expect(await names(['plan', '--config', 'c.yaml'])).toEqual(['plan', 'apply']);
    // A command name later on the line is an argument, not the command.
    expect(await names(['trigger', 'audit', '--config', 'c.yaml'])).toEqual(['trigger', 'resume', 'approve-deletes', 'status']);
    expect(await names(['status', '--tenant', 'audit'])).toEqual(['trigger', 'resume', 'approve-deletes', 'status']);
    expect(await names(['ledger', 'import', '--config', 'c.yaml'])).toEqual(['ledger']);
    expect(await names(['log', '--user', 'alice'])).toEqual(['log']);
    expect(await names(['frobnicate'])).toHaveLength(17);
    expect(await names(['--help'])).toHaveLength(17);
  });

  it('turns usage errors into CommanderError instead of exiting, for subcommands too', async () => {
    const program = buildProgram(await loadCommands()).configureOutput({ writeErr: () => {}, writeOut: () => {} });
    for (const c of program.commands) c.configureOutput({ writeErr: () => {}, writeOut: () => {} });
    await expect(program.parseAsync(['node', 'x', 'validate', '--nope'])).rejects.toBeInstanceOf(CommanderError);
    await expect(program.parseAsync(['node', 'x', 'frobnicate'])).rejects.toMatchObject({ code: 'commander.unknownCommand' });
  });

  it('passes settings down to nested subcommands (the real `audit export`, and one added later)', async () => {
    const program = buildProgram(await loadCommands()).configureOutput({ writeErr: () => {}, writeOut: () => {} });
    // Without the exit override reaching `export`, commander would call process.exit here.
    await expect(program.parseAsync(['node', 'x', 'audit', 'export', '--config', 'c.yaml', '--nope'])).rejects.toMatchObject({
      code: 'commander.unknownOption',
    });
    const extra = new Command('extra').addCommand(new Command('run').action(() => {}));
    inheritSettings(program, extra);
    program.addCommand(extra);
    await expect(program.parseAsync(['node', 'x', 'extra', 'run', '--nope'])).rejects.toMatchObject({ code: 'commander.unknownOption' });
  });
});
