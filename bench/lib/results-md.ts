/**
 * bench/RESULTS.md is shared by every benchmark: each one owns the block between its own
 * `<!-- bench:<name>:begin -->` / `<!-- bench:<name>:end -->` markers and rewrites only that,
 * appending the block the first time.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const RESULTS_PATH = join(import.meta.dirname, '..', 'RESULTS.md');

export function replaceSection(current: string, name: string, body: string): string {
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  const block = `${begin}\n${body.trimEnd()}\n${end}`;
  const from = current.indexOf(begin);
  const to = current.indexOf(end);
  if (from >= 0 && to > from) return `${current.slice(0, from)}${block}${current.slice(to + end.length)}`;
  const base = current.trim() === '' ? '# Benchmark results\n' : current.trimEnd();
  return `${base}\n\n${block}\n`;
}

export async function writeResultsSection(name: string, body: string, path = RESULTS_PATH): Promise<void> {
  let current = '';
  try {
    current = await readFile(path, 'utf8');
  } catch {
    // first benchmark to write: start the file
  }
  await writeFile(path, replaceSection(current, name, body));
}
