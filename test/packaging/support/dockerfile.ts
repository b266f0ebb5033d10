/**
 * A Dockerfile reader for the packaging checks (docker does not run here): instructions with
 * their line, flags (`--from=build`) and arguments, grouped into stages, after the parser
 * rules that matter — parser directives, comments, line continuations (also across comment
 * lines), and the exec (JSON) form of RUN/CMD/ENTRYPOINT. Heredocs are not supported.
 */

export interface Instruction {
  /** Upper-cased, e.g. `COPY`. */
  keyword: string;
  /** `--name=value` flags before the arguments (`--mount` may repeat: the values are joined with a newline). */
  flags: Record<string, string>;
  /** The arguments after the flags, continuations joined with a space. */
  args: string;
  /** 1-based line of the instruction's first line. */
  line: number;
}

export interface Stage {
  /** The FROM image (ARG references not expanded), e.g. `${NODE_IMAGE}`. */
  from: string;
  /** `AS name`, lower-cased, when given. */
  name: string | undefined;
  instructions: Instruction[];
}

export interface Dockerfile {
  directives: Record<string, string>;
  /** ARGs before the first FROM (usable in FROM lines), name → default. */
  globalArgs: Record<string, string | undefined>;
  stages: Stage[];
}

const DIRECTIVE = /^#\s*([a-zA-Z]+)\s*=\s*(.*?)\s*$/;

function splitFlags(rest: string): { flags: Record<string, string>; args: string } {
  const flags: Record<string, string> = {};
  let args = rest;
  for (;;) {
    const m = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(args);
    if (!m) break;
    const name = m[1] as string;
    flags[name] = flags[name] === undefined ? (m[2] ?? 'true') : `${flags[name]}\n${m[2] ?? 'true'}`;
    args = args.slice(m[0].length);
  }
  return { flags, args: args.trim() };
}

export function parseDockerfile(text: string): Dockerfile {
  const lines = text.split(/\r?\n/);
  const directives: Record<string, string> = {};
  let i = 0;
  // Parser directives: only at the very top, before any comment, blank line or instruction.
  for (; i < lines.length; i++) {
    const m = DIRECTIVE.exec(lines[i] as string);
    if (!m || (m[1] as string).toLowerCase() in directives) break;
    directives[(m[1] as string).toLowerCase()] = m[2] as string;
  }
  const escape = directives['escape'] ?? '\\';
  const instructions: Instruction[] = [];
  let current: { text: string; line: number } | undefined;
  for (; i < lines.length; i++) {
    const raw = lines[i] as string;
    const trimmed = raw.trim();
    // A comment or a blank line never ends a continuation; it is simply dropped.
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const continues = trimmed.endsWith(escape);
    const body = continues ? trimmed.slice(0, -escape.length) : trimmed;
    if (current === undefined) current = { text: body, line: i + 1 };
    else current.text = `${current.text} ${body.trim()}`;
    if (!continues) {
      const m = /^(\S+)\s*(.*)$/s.exec(current.text.trim()) as RegExpExecArray;
      const { flags, args } = splitFlags(m[2] as string);
      instructions.push({ keyword: (m[1] as string).toUpperCase(), flags, args, line: current.line });
      current = undefined;
    }
  }
  if (current !== undefined) throw new Error(`line ${current.line}: the file ends inside a line continuation`);

  const globalArgs: Record<string, string | undefined> = {};
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const m = /^(\S+)(?:\s+as\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`line ${ins.line}: cannot read FROM ${ins.args}`);
      stages.push({ from: m[1] as string, name: m[2]?.toLowerCase(), instructions: [] });
    } else if (stages.length === 0) {
      if (ins.keyword !== 'ARG') throw new Error(`line ${ins.line}: ${ins.keyword} before the first FROM`);
      const [name, value] = ins.args.split('=', 2) as [string, string | undefined];
      globalArgs[name] = value;
    } else {
      (stages[stages.length - 1] as Stage).instructions.push(ins);
    }
  }
  return { directives, globalArgs, stages };
}

/** The JSON (exec) form of RUN/CMD/ENTRYPOINT as an argv, or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  try {
    const v: unknown = JSON.parse(args);
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;
  } catch {
    return undefined;
  }
}

/** `${NAME}` / `$NAME` in a FROM line, expanded with the global ARG defaults. */
export function expandArgs(value: string, args: Record<string, string | undefined>): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (_, a: string | undefined, b: string | undefined) => args[(a ?? b) as string] ?? '',
  );
}

/** KEY=VALUE pairs of an ENV or LABEL instruction (quoted values allowed; the legacy `ENV KEY value` form too). */
export function keyValues(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  const pair = /([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|'[^']*'|\S+)/g;
  if (!/^[A-Za-z0-9_.-]+=/.test(args)) {
    const [k, ...v] = args.split(/\s+/);
    if (k) out[k] = v.join(' ');
    return out;
  }
  for (const m of args.matchAll(pair)) {
    const raw = m[2] as string;
    out[m[1] as string] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw.startsWith("'") ? raw.slice(1, -1) : raw;
  }
  return out;
}

/**
 * Whether `.dockerignore` keeps `path` (relative, forward slashes) out of the build context:
 * the last matching pattern wins, `!` re-includes, a pattern also matches everything below a
 * directory it matches, `**` spans directories.
 */
export function isIgnored(dockerignore: string, path: string): boolean {
  const patterns = dockerignore
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const toRegex = (p: string): RegExp => {
    const clean = p.replace(/^\/+/, '').replace(/\/+$/, '');
    let re = '';
    for (let i = 0; i < clean.length; i++) {
      const c = clean[i] as string;
      if (c === '*' && clean[i + 1] === '*') {
        re += clean[i + 2] === '/' ? '(?:.*/)?' : '.*';
        i += clean[i + 2] === '/' ? 2 : 1;
      } else if (c === '*') re += '[^/]*';
      else if (c === '?') re += '[^/]';
      else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    return new RegExp(`^${re}(?:/.*)?$`);
  };
  let ignored = false;
  for (const p of patterns) {
    const negate = p.startsWith('!');
    if (toRegex(negate ? p.slice(1) : p).test(path)) ignored = !negate;
  }
  return ignored;
}
