/**
 * zod issues → one actionable line each: the exact key path, what is wrong, and the fix.
 *   platform.baseUrl: must be a URL like https://acme.example.com (got "ftp:/x")
 *   platform.tokn: unknown key — did you mean "token"?
 * Values that may be secrets are never echoed: under a secret-named key anywhere on the path
 * (token, password, auth, headers.Authorization…), or that look like a credential wherever they
 * stand (secret-text.ts); a URL is shown with its password masked.
 */
import type { z } from 'zod';
import { closestMatch } from './suggest.ts';
import { objectShape, schemaAt, valueAt, type AnySchema, type PathSegment } from './schema-walk.ts';
import { isSecretPath, showableValue } from './secret-text.ts';

type Issue = z.core.$ZodIssue;

export interface FormatContext {
  /** The schema that produced the issues, to list the keys an object accepts. */
  schema?: AnySchema;
  /** The raw input, to show what was given. */
  input?: unknown;
  /** Prefix for every path (e.g. `users[3]` when validating one entry of a file). */
  basePath?: PathSegment[];
}

export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out === '' ? '(top level)' : out;
}

const DEFAULT_MESSAGE = /^(Invalid|Too small|Too big|Unrecognized key|Expected)/;

function customMessage(issue: Issue): string | undefined {
  return DEFAULT_MESSAGE.test(issue.message) ? undefined : issue.message;
}

const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping (key: value)',
  array: 'a list',
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
};

function describe(value: unknown, path: readonly PathSegment[]): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    const showable = showableValue(value, path);
    if (showable === undefined) return 'a string (not shown: it may hold a secret)';
    value = showable;
  } else if (isSecretPath(path)) return `a ${typeof value}`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function quoteList(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

function typeNoun(path: readonly PathSegment[]): string {
  const owner = [...path.slice(0, -1)].reverse().find((s): s is string => typeof s === 'string');
  if (owner === undefined) return '';
  return `${owner.endsWith('s') && !owner.endsWith('ss') ? owner.slice(0, -1) : owner} `;
}

export function formatIssues(issues: readonly Issue[], ctx: FormatContext = {}): string[] {
  const lines = issues.flatMap((issue) => formatIssue(issue, ctx, []));
  return [...new Set(lines)];
}

function formatIssue(issue: Issue, ctx: FormatContext, unionBase: PathSegment[]): string[] {
  const rel = [...unionBase, ...(issue.path as PathSegment[])];
  const path = [...(ctx.basePath ?? []), ...rel];
  const got = valueAt(ctx.input, rel);
  const shown = describe(got, path);
  const line = (text: string): string => `${formatPath(path)}: ${text}`;
  const custom = customMessage(issue);

  switch (issue.code) {
    case 'invalid_type': {
      const expected = TYPE_NAMES[issue.expected] ?? `a ${issue.expected}`;
      if (got === undefined)
        return [line(custom ? `required key is missing — ${custom}` : `required key is missing (expected ${expected})`)];
      let hint = '';
      if (issue.expected === 'number' && typeof got === 'string' && got.trim() !== '' && !Number.isNaN(Number(got)))
        hint = ' — remove the quotes';
      if (issue.expected === 'boolean' && (got === 'true' || got === 'false')) hint = ' — remove the quotes';
      return [line(custom ? `${custom} (got ${shown})` : `expected ${expected}, got ${shown}${hint}`)];
    }
    case 'invalid_value': {
      const values = issue.values;
      const suggestion = typeof got === 'string' ? closestMatch(got, values.map(String)) : undefined;
      const want = values.length === 1 ? `must be ${quoteList(values)}` : `must be one of ${quoteList(values)}`;
      return [line(`${custom ?? want} (got ${shown})${suggestion ? ` — did you mean "${suggestion}"?` : ''}`)];
    }
    case 'invalid_format': {
      if (custom) return [line(`${stripPath(custom, path)} (got ${shown})`)];
      const f = issue as Issue & { format: string; pattern?: string; prefix?: string; suffix?: string };
      const text =
        f.format === 'url'
          ? 'must be a URL like https://host.example.com'
          : f.format === 'regex'
            ? `must match ${f.pattern ?? 'the expected pattern'}`
            : f.format === 'starts_with'
              ? `must start with "${f.prefix ?? ''}"`
              : f.format === 'ends_with'
                ? `must end with "${f.suffix ?? ''}"`
                : f.format === 'email'
                  ? 'must be an e-mail address'
                  : `must be a valid ${f.format}`;
      return [line(`${text} (got ${shown})`)];
    }
    case 'too_small':
    case 'too_big': {
      if (custom) return [line(custom)];
      const small = issue.code === 'too_small';
      const bound = small ? (issue as { minimum: number | bigint }).minimum : (issue as { maximum: number | bigint }).maximum;
      const inclusive = (issue as { inclusive?: boolean }).inclusive !== false;
      const origin = (issue as { origin: string }).origin;
      if (origin === 'string') {
        if (small && Number(bound) === 1) return [line('must not be empty')];
        return [line(`must be ${small ? 'at least' : 'at most'} ${bound} characters`)];
      }
      if (origin === 'array' || origin === 'set') return [line(`needs ${small ? 'at least' : 'at most'} ${bound} entries`)];
      const op = small ? (inclusive ? '≥' : '>') : inclusive ? '≤' : '<';
      return [line(`must be ${op} ${bound} (got ${shown})`)];
    }
    case 'unrecognized_keys': {
      const known = ctx.schema ? Object.keys(objectShape(schemaAt(ctx.schema, ctx.input, rel) as AnySchema, got) ?? {}) : [];
      return issue.keys.map((key) => {
        const keyLine = `${formatPath([...path, key])}: unknown key`;
        const suggestion = closestMatch(key, known);
        if (suggestion) return `${keyLine} — did you mean "${suggestion}"?`;
        return known.length > 0 ? `${keyLine}; allowed here: ${known.join(', ')}` : `${keyLine}; remove it`;
      });
    }
    case 'invalid_union': {
      const u = issue as Issue & { errors: Issue[][]; discriminator?: string; options?: unknown[]; note?: string };
      if (u.discriminator !== undefined || u.note === 'No matching discriminator') {
        const options = (u.options ?? []).map(String);
        if (got === undefined) return [line(`required key is missing; set it to one of: ${options.join(', ')}`)];
        const suggestion = typeof got === 'string' ? closestMatch(got, options) : undefined;
        return [
          line(
            `unknown ${typeNoun(path)}type ${shown}; expected one of: ${options.join(', ')}${suggestion ? ` — did you mean "${suggestion}"?` : ''}`,
          ),
        ];
      }
      // Report the branch whose basic shape matched (e.g. the object form of a mapping rule).
      const branches = u.errors.filter((b) => !b.some((i) => i.code === 'invalid_type' && i.path.length === 0));
      const best = branches.sort((a, b) => a.length - b.length)[0];
      if (best) return best.flatMap((i) => formatIssue(i, ctx, rel));
      if (got === undefined) return [line('required key is missing')];
      const expected = u.errors.flatMap((b) =>
        b
          .filter((i) => i.code === 'invalid_type')
          .map((i) => TYPE_NAMES[(i as { expected: string }).expected] ?? (i as { expected: string }).expected),
      );
      return [line(`expected ${[...new Set(expected)].join(' or ')}, got ${shown}`)];
    }
    case 'invalid_key':
    case 'invalid_element': {
      const nested = (issue as Issue & { issues: Issue[]; key?: PathSegment }).issues;
      return nested.flatMap((i) => formatIssue(i, ctx, rel));
    }
    default:
      return [line(stripPath(issue.message, path))];
  }
}

/** Messages written for a key sometimes start with its path already; say it once. */
function stripPath(message: string, path: readonly PathSegment[]): string {
  const p = formatPath(path);
  return message.startsWith(p) ? message.slice(p.length).replace(/^[:\s]+/, '') : message;
}
