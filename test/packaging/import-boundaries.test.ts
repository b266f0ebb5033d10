/**
 * The folder layout is the architecture: these rules keep it true. Each follows the static
 * imports of a layer transitively and names the chain that breaks a rule.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { globSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]/gm;

function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2];
    // `import type` is erased: it creates no runtime dependency.
    if (spec && !/^\s*(?:import|export)\s+type\s/.test(m[0])) out.push(resolve(dirname(file), spec));
  }
  return out;
}

/** The first import chain from `start` to a file matching `bad`, or undefined. */
function chainTo(start: string, bad: (rel: string) => boolean): string[] | undefined {
  const seen = new Set<string>();
  const walk = (file: string, path: string[]): string[] | undefined => {
    if (seen.has(file)) return undefined;
    seen.add(file);
    const rel = relative(ROOT, file);
    if (path.length > 0 && bad(rel)) return [...path, rel];
    for (const next of staticImports(file)) {
      const found = walk(next, [...path, rel]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, []);
}

const files = (pattern: string) => globSync(pattern, { cwd: ROOT }).map((f) => join(ROOT, f));

describe('import boundaries', () => {
  it('config/ does not import the platform HTTP client', () => {
    for (const f of files('src/config/*.ts'))
      expect(
        chainTo(f, (r) => r === 'src/platform/http-client.ts'),
        f,
      ).toBeUndefined();
  });

  it('the simulator does not import the CLI', () => {
    for (const f of files('src/simulator/**/*.ts')) expect(chainTo(f, (r) => r.startsWith('src/cli/'))).toBeUndefined();
  });

  it('errors live in one module every layer imports (src/errors.ts), which imports nothing of ours', () => {
    expect(staticImports(join(ROOT, 'src/errors.ts'))).toEqual([]);
    const all = files('src/**/*.ts');
    const importers = all.filter((f) => staticImports(f).includes(join(ROOT, 'src/errors.ts')));
    for (const layer of ['config', 'platform', 'sources', 'reconcile', 'audit', 'jobs', 'cli']) {
      expect(
        importers.some((f) => relative(ROOT, f).startsWith(`src/${layer}/`)),
        layer,
      ).toBe(true);
    }
    // Nothing reaches into the platform layer for them any more.
    for (const f of all) expect(readFileSync(f, 'utf8'), relative(ROOT, f)).not.toMatch(/from '[^']*platform\/errors\.ts'/);
  });

  it('engines (reconcile, audit, sources, platform) import neither the job layer nor the CLI', () => {
    for (const f of files('src/{reconcile,audit,sources,platform,identity}/**/*.ts')) {
      expect(chainTo(f, (r) => r.startsWith('src/cli/') || r.startsWith('src/jobs/'))).toBeUndefined();
    }
  });
});
