/**
 * `${VAR}` and `${VAR:-default}` in YAML string values, filled from the environment.
 * Works on the parsed document rather than the text, so a value can never inject YAML
 * (a token containing `#` or `: ` stays one string). `$${X}` is a literal `${X}`.
 * An unquoted value that is exactly one reference takes the type of what it expands to
 * (`timeoutSeconds: ${TIMEOUT:-30}` is the number 30); quote it to keep a string.
 * Secret-named keys always stay strings.
 */
import { isMap, isScalar, isSeq, parse, Scalar, type Document, type LineCounter, type Node } from 'yaml';
import { formatPath } from './format-issues.ts';
import { isSecretKeyName } from './secret-text.ts';
import type { PathSegment } from './schema-walk.ts';

export type Env = Record<string, string | undefined>;

const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g;
const INNER = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

export interface ExpandResult {
  value: string;
  /** Problems, each phrased to follow `<key path>: `. */
  problems: string[];
}

/** Expands one string. Exported for values that do not come from YAML (e.g. CLI flags). */
export function expandString(raw: string, env: Env): ExpandResult {
  const problems: string[] = [];
  const value = raw.replace(REFERENCE, (match: string, inner: string | undefined) => {
    if (match === '$${') return '${';
    const m = INNER.exec(inner ?? '');
    if (!m) {
      problems.push(`malformed reference ${match}; write \${NAME} or \${NAME:-default} (and $\${ for a literal \${)`);
      return match;
    }
    const name = m[1] as string;
    const fallback = m[2];
    const set = env[name];
    if (fallback !== undefined && (set === undefined || set === '')) return fallback;
    if (set === undefined) {
      problems.push(`environment variable ${name} is not set; export ${name}, or give a default with \${${name}:-value}`);
      return match;
    }
    return set;
  });
  if (/\$\{(?![^}]*\})/.test(raw.replace(/\$\$\{/g, ''))) {
    problems.push('unclosed ${ reference; write ${NAME} or ${NAME:-default}');
  }
  return { value, problems };
}

function retype(expanded: string): string | number | boolean {
  if (expanded.trim() === '') return expanded;
  try {
    const v: unknown = parse(expanded);
    return typeof v === 'number' || typeof v === 'boolean' ? v : expanded;
  } catch {
    return expanded;
  }
}

/** Substitutes in place; returns one message per problem, naming the key path (and line). */
export function substituteEnv(doc: Document, env: Env, lines?: LineCounter): string[] {
  const issues: string[] = [];
  const visit = (node: unknown, path: PathSegment[]): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        visit(pair.value, [...path, typeof key === 'number' ? String(key) : String(key)]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => visit(item, [...path, i]));
    } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('${')) {
      const raw = node.value;
      const { value, problems } = expandString(raw, env);
      const where = lines && (node as Node).range ? ` (line ${lines.linePos((node as Node).range?.[0] ?? 0).line})` : '';
      for (const p of problems) issues.push(`${formatPath(path)}: ${p}${where}`);
      const wholeReference = /^\$\{[^}]*\}$/.test(raw);
      node.value = node.type === Scalar.PLAIN && wholeReference && !isSecretKeyName(path.at(-1)) ? retype(value) : value;
    }
  };
  visit(doc.contents, []);
  return issues;
}
