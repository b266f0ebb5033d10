/**
 * What tunes the runtime instead of the code: environment variables that pass flags to Node
 * and V8 or change glibc's allocator, command-line flags before the script, and V8 flags set
 * from inside the process. The image, the chart and the launcher must have none of them.
 */

/** Environment variables that tune Node, V8, libuv or the C allocator. */
const TUNING_ENV = /^(NODE_OPTIONS|UV_THREADPOOL_SIZE|GLIBC_TUNABLES|LD_PRELOAD|MALLOC_\w+)$/;

/** The names among `names` that tune the runtime. */
export const tuningEnv = (names: Iterable<string>): string[] => [...names].filter((n) => TUNING_ENV.test(n));

/** Flags given to `node` before the script (`node --max-old-space-size=… bin/x.mjs` → the flag). */
export function nodeFlags(command: readonly string[]): string[] {
  if (command[0] !== 'node') return [];
  const script = command.findIndex((a, i) => i > 0 && !a.startsWith('-'));
  return command.slice(1, script < 0 ? undefined : script);
}

/** Calls that change V8's or Node's flags at run time, in a JavaScript or TypeScript source. */
export function runtimeFlagCalls(source: string): string[] {
  return [...source.matchAll(/(\bsetFlagsFromString\b|\bprocess\.execArgv\s*\.push\b|--(?:max|min)-[\w-]*space[\w-]*|--heap-[\w-]+)/g)].map(
    (m) => m[1] as string,
  );
}
