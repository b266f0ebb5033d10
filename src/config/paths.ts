import { isAbsolute, resolve } from 'node:path';

/**
 * Paths in the config (source files, secret files, state.dir) are relative to the config
 * file's directory, not to the working directory, so a config behaves the same wherever
 * the command is started from.
 */
export function resolveConfigPath(configDir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(configDir, path);
}
