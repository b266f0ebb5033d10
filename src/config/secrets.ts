/**
 * Reads every file-reference key (see file-refs.ts) once, at load: a missing or empty
 * secret fails the start-up with the key and the path, never with the content.
 */
import { readFile } from 'node:fs/promises';
import { fileRefs } from './file-refs.ts';
import { formatPath } from './format-issues.ts';
import { resolveConfigPath } from './paths.ts';
import { walkSchema, type AnySchema } from './schema-walk.ts';
import { Secret } from './secret.ts';

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'is a directory, not a file',
  ENOTDIR: 'a parent is not a directory',
};

export interface FileRefResult {
  /** File content by key path (`platform.tokenFile`, `redis.passwordFile`, `platform.caFile`). */
  files: Map<string, Secret>;
  issues: string[];
}

/** Removes exactly one trailing newline, as written by `echo` or `kubectl create secret --from-file`. */
export function trimOneNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

export async function readFileRefs(schema: AnySchema, config: unknown, configDir: string): Promise<FileRefResult> {
  const refs: { keyPath: string; path: string }[] = [];
  walkSchema(schema, config, ({ chain, value, path }) => {
    const meta = chain.map((s) => fileRefs.get(s)).find((m) => m !== undefined);
    if (meta && typeof value === 'string') refs.push({ keyPath: formatPath(path), path: resolveConfigPath(configDir, value) });
  });
  const files = new Map<string, Secret>();
  const issues: string[] = [];
  await Promise.all(
    refs.map(async (ref) => {
      let content: string;
      try {
        content = trimOneNewline(await readFile(ref.path, 'utf8'));
      } catch (e) {
        const code = (e as { code?: string }).code ?? 'unknown error';
        issues.push(`${ref.keyPath}: cannot read ${ref.path} (${READ_ERRORS[code] ?? code})`);
        return;
      }
      if (content.trim() === '') {
        issues.push(`${ref.keyPath}: ${ref.path} is empty`);
        return;
      }
      files.set(ref.keyPath, new Secret(content, ref.keyPath));
    }),
  );
  return { files, issues };
}
