/**
 * Reads a sink credential from inline config (already ${ENV}-substituted) or from a file
 * (a mounted secret). The value is never logged; errors name the config key, not the value.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { ConfigError, errorCodeOf } from '../../errors.ts';

export function resolvePath(configDir: string, p: string): string {
  return isAbsolute(p) ? p : resolve(configDir, p);
}

export async function readSecret(
  inline: string | undefined,
  file: string | undefined,
  configDir: string,
  keyPath: string,
): Promise<string> {
  let value: string;
  if (inline !== undefined) {
    value = inline;
  } else if (file !== undefined) {
    try {
      value = await readFile(resolvePath(configDir, file), 'utf8');
    } catch (e) {
      throw new ConfigError(`${keyPath}File cannot be read (${errorCodeOf(e) ?? 'error'}): ${file}`);
    }
    // Mounted secrets and `echo > file` end with a newline that is not part of the secret.
    value = value.replace(/[\r\n]+$/, '');
  } else {
    throw new ConfigError(`set ${keyPath} or ${keyPath}File`);
  }
  if (value === '' || /[\r\n]/.test(value)) {
    throw new ConfigError(`${keyPath} is empty or contains a line break (check ${keyPath} / ${keyPath}File)`);
  }
  return value;
}

/** Replace every occurrence of any secret in a text that may echo a server response. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}

/** Exactly one of `key` / `keyFile`, for zod refinements. */
export function oneOf(obj: Record<string, unknown>, key: string): boolean {
  return (obj[key] === undefined) !== (obj[`${key}File`] === undefined);
}
