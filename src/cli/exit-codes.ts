/**
 * Exit codes and the one wrapper every command action goes through. Scripts and
 * Kubernetes Jobs branch on these numbers, so they are part of the interface. EXIT_CODES
 * is the single table of what each means; the README's "Exit codes" table is this one
 * (test/cli/exit-codes.test.ts compares them).
 */
import { Command, CommanderError } from 'commander';
import { ConfigError, ErrorCodes, isSyncError } from '../errors.ts';
import { paint } from './output.ts';
import { printable } from '../observability/printable.ts';
import { tracingEndpoint } from '../observability/tracing/endpoint.ts';

export const ExitCode = {
  OK: 0,
  FAILED: 1,
  CONFIG: 2,
  GUARD: 3,
  REJECTED: 4,
  AUDIT_GAP: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** What each exit code means, for every command (the README's table). */
export const EXIT_CODES: ReadonlyArray<{ code: ExitCode; meaning: string }> = [
  {
    code: ExitCode.OK,
    meaning:
      'success: everything planned was applied, or there was nothing to do (a plan or apply with rejected source entries says so in its headline; see 4)',
  },
  {
    code: ExitCode.FAILED,
    meaning:
      'some operations failed (each listed with its reason), a user-attribute error, a runtime failure (platform unreachable after retries, source read failed, Redis not answering within `redis.connectTimeoutSeconds`: `E_REDIS_UNAVAILABLE`), or `apply` declined at its confirmation prompt (nothing applied)',
  },
  {
    code: ExitCode.CONFIG,
    meaning:
      'configuration or usage error, including errors only a config or credential change can fix: HTTP 401 ("credential missing, malformed or expired"), HTTP 403 ("valid credential not authorized for this target"), a source credential the directory refuses (LDAP invalid credentials), insecure URL, audit-log feature not enabled, a sink setting the sink would refuse; `--only` naming no user in the source or on the platform; `apply --plan` when the plan is stale (an object it touches changed on the platform or in the source since it was made; nothing applied); `apply --json` on a terminal without `--yes`',
  },
  {
    code: ExitCode.GUARD,
    meaning:
      'a safety guard tripped: deactivations/deletions exceeded `guards.maxDeletes` / `maxDeletePercent`, member removals exceeded `maxMemberRemovals` / `maxMemberRemovalPercent`, the source returned no users or no group members, or rejected entries without identity could be the people to deprovision; destructive operations were held',
  },
  {
    code: ExitCode.REJECTED,
    meaning:
      'only with `--fail-on-rejected` (`plan`, `apply`): the source rejected entries (or user-attribute values), or an identity conflict held a newcomer (docs/reconcile.md, identity conflicts); everything else was planned or applied. Codes 1–3 take precedence',
  },
  {
    code: ExitCode.AUDIT_GAP,
    meaning:
      "`audit verify`: a window's re-export differs from what the export delivered — events missing (or unexpected); the windows and, with a `file` sink, the events are listed ([docs/audit.md](docs/audit.md#verify))",
  },
];

/** The EXIT_CODES table as Markdown rows, as the README shows it. */
export function exitCodeTable(): string {
  return ['| code | meaning |', '|---|---|', ...EXIT_CODES.map((e) => `| ${e.code} | ${e.meaning} |`)].join('\n');
}

/** Errors that retrying cannot fix: the operator has to change the config or the credential. */
const CONFIG_CLASS_CODES = new Set<string>([
  ErrorCodes.CONFIG_INVALID,
  ErrorCodes.AUTH_INVALID,
  ErrorCodes.AUTH_FORBIDDEN,
  ErrorCodes.INSECURE_URL,
  ErrorCodes.FEATURE_DISABLED,
]);

/** Whether a stable error code means "change the config or the credential" (exit 2). */
export function isConfigClassCode(code: string): boolean {
  return CONFIG_CLASS_CODES.has(code);
}

export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.OK : ExitCode.CONFIG;
  if (error instanceof ConfigError) return ExitCode.CONFIG;
  if (isSyncError(error)) {
    if (error.code === ErrorCodes.GUARD_TRIPPED) return ExitCode.GUARD;
    if (CONFIG_CLASS_CODES.has(error.code)) return ExitCode.CONFIG;
  }
  return ExitCode.FAILED;
}

/** The text printed for an error: `error [E_CODE]: message`, config issues one per line, stack only when debugging. */
export function formatError(error: unknown, debug = false): string {
  const lines: string[] = [];
  const label = paint('red', 'error', process.stderr);
  if (isSyncError(error)) {
    // Messages quote data (a server's detail, a name): escaped, so none can format the terminal.
    lines.push(`${label} [${error.code}]: ${printable(error.message)}`);
    if (error instanceof ConfigError) for (const issue of error.issues) lines.push(`  - ${printable(issue)}`);
  } else if (error instanceof Error) {
    lines.push(`${label}: ${printable(error.message)}`);
  } else {
    lines.push(`${label}: ${printable(String(error))}`);
  }
  if (debug && error instanceof Error) {
    if (error.stack) lines.push(error.stack);
    let cause: unknown = error.cause;
    for (let depth = 0; cause !== undefined && depth < 5; depth++) {
      lines.push(`caused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`);
      cause = cause instanceof Error ? cause.cause : undefined;
    }
  } else if (!isSyncError(error)) {
    lines.push('  (unexpected error: run again with --debug for the stack trace)');
  }
  return `${lines.join('\n')}\n`;
}

function isDebug(args: readonly unknown[]): boolean {
  const cmd = args.at(-1);
  return cmd instanceof Command && cmd.optsWithGlobals<{ debug?: boolean }>().debug === true;
}

/** The one-shot runs that are one trace each when an OTLP endpoint is set (the daemon traces its own jobs). */
const TRACED_COMMANDS = new Set(['plan', 'apply', 'audit export', 'audit verify']);

/** The command's name when its run is traced, else undefined (nothing of OpenTelemetry is loaded). */
function tracedCommand(args: readonly unknown[]): string | undefined {
  const cmd = args.at(-1);
  if (!(cmd instanceof Command)) return undefined;
  const parent = cmd.parent?.parent ? `${cmd.parent.name()} ` : '';
  const name = `${parent}${cmd.name()}`;
  return TRACED_COMMANDS.has(name) && tracingEndpoint() !== undefined ? name : undefined;
}

/**
 * Wraps a commander action: the action returns an exit code (or nothing for success)
 * or throws; either way the process exit code is set here and errors are printed once,
 * cleanly, on stderr. The process is left to exit naturally so output is flushed.
 */
export function runCommand<A extends unknown[]>(action: (...args: A) => Promise<number | void>): (...args: A) => Promise<void> {
  return async (...args: A): Promise<void> => {
    try {
      const traced = tracedCommand(args);
      const code =
        traced === undefined
          ? await action(...args)
          : await (await import('../observability/tracing/one-shot.ts')).runTraced(traced, () => action(...args));
      process.exitCode = code ?? ExitCode.OK;
    } catch (error) {
      process.stderr.write(formatError(error, isDebug(args)));
      process.exitCode = exitCodeFor(error);
    }
  };
}
