/**
 * Exit codes and the one wrapper every command action goes through. Scripts and
 * Kubernetes Jobs branch on these numbers, so they are part of the interface:
 *   0  success
 *   1  some operations failed (or an unexpected error)
 *   2  configuration error — invalid config, usage error, and the fatal errors that only
 *      a config/credential change can fix: 401, 403, insecure URL, feature not enabled
 *   3  a safety guard tripped (e.g. too many deletions); nothing was changed past it
 *   4  `audit verify` found a window whose re-export differs from what was delivered
 */
import { Command, CommanderError } from 'commander';
import { ConfigError, ErrorCodes, isSyncError } from '../errors.ts';
import { paint } from './output.ts';

export const ExitCode = {
  OK: 0,
  FAILED: 1,
  CONFIG: 2,
  GUARD: 3,
  AUDIT_GAP: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

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
    lines.push(`${label} [${error.code}]: ${error.message}`);
    if (error instanceof ConfigError) for (const issue of error.issues) lines.push(`  - ${issue}`);
  } else if (error instanceof Error) {
    lines.push(`${label}: ${error.message}`);
  } else {
    lines.push(`${label}: ${String(error)}`);
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

/**
 * Wraps a commander action: the action returns an exit code (or nothing for success)
 * or throws; either way the process exit code is set here and errors are printed once,
 * cleanly, on stderr. The process is left to exit naturally so output is flushed.
 */
export function runCommand<A extends unknown[]>(action: (...args: A) => Promise<number | void>): (...args: A) => Promise<void> {
  return async (...args: A): Promise<void> => {
    try {
      const code = await action(...args);
      process.exitCode = code ?? ExitCode.OK;
    } catch (error) {
      process.stderr.write(formatError(error, isDebug(args)));
      process.exitCode = exitCodeFor(error);
    }
  };
}
