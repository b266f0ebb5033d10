/**
 * Reading the chart without helm: its files, the `.Values.…` paths its Go templates use
 * (directly, as `$.Values…`, or through a variable bound to a values subtree), and the key
 * paths values.yaml defines.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const REPO_DIR = fileURLToPath(new URL('../../../', import.meta.url));
export const CHART_DIR = join(REPO_DIR, 'helm/scim-audit-sync');

/** Every file of the chart, relative to the chart directory, sorted. */
export function chartFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = join(dir, name);
      return statSync(full).isDirectory() ? walk(full) : [relative(CHART_DIR, full)];
    });
  return walk(CHART_DIR).sort();
}

export const readChartFile = (path: string): string => readFileSync(join(CHART_DIR, path), 'utf8');

/** Files Helm renders as Go templates (templates/) or through `tpl` (files/). */
export function templateFiles(): string[] {
  return chartFiles().filter((f) => f.startsWith('templates/') || (f.startsWith('files/') && f.endsWith('.yaml')));
}

export function loadValues(path = 'values.yaml'): Record<string, unknown> {
  return parse(readChartFile(path)) as Record<string, unknown>;
}

const IDENT_PATH = /((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/.source;

/**
 * The values paths a template reads, e.g. `networkPolicy.dns.podLabels`: `.Values.a.b`,
 * `$.Values.a.b`, and `$v.c` after `$v := .Values.a.b`.
 */
export function valuesReferences(template: string): string[] {
  const refs = new Set<string>();
  for (const m of template.matchAll(new RegExp(`\\.Values${IDENT_PATH}`, 'g'))) refs.add((m[1] as string).slice(1));
  const bound = new Map<string, string>();
  for (const m of template.matchAll(new RegExp(`\\$([A-Za-z_][A-Za-z0-9_]*)\\s*:?=\\s*\\$?\\.Values${IDENT_PATH}`, 'g'))) {
    bound.set(m[1] as string, (m[2] as string).slice(1));
  }
  for (const m of template.matchAll(new RegExp(`\\$([A-Za-z_][A-Za-z0-9_]*)${IDENT_PATH}`, 'g'))) {
    const base = bound.get(m[1] as string);
    if (base !== undefined) refs.add(`${base}${m[2] as string}`);
  }
  return [...refs].sort();
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `path` (dotted) names a key that exists in `values`. */
export function hasValuesPath(values: Record<string, unknown>, path: string): boolean {
  let node: unknown = values;
  for (const key of path.split('.')) {
    if (!isObject(node) || !(key in node)) return false;
    node = node[key];
  }
  return true;
}

/** Every key path of a values document (objects only; lists are leaves), e.g. `image.tag`. */
export function keyPaths(values: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(values).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k;
    return isObject(v) && Object.keys(v).length > 0 ? [path, ...keyPaths(v, path)] : [path];
  });
}

/** Strips Go template actions (`{{ … }}`), leaving the text Helm would copy through. */
export function withoutActions(text: string): string {
  return text.replace(/\{\{[\s\S]*?\}\}/g, '');
}
