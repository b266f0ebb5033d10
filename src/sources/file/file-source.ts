/**
 * A static directory in a YAML or JSON file: `{ users: [...], groups: [...] }`.
 * The whole read fails (SourceError) when the file is missing, unreadable, unparseable or
 * not of that shape — including a misspelled top-level key — because a half-read
 * directory would look like mass departures to the planner. Bad entries inside a good
 * file are rejected one by one (see normalize.ts).
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parseDocument } from 'yaml';
import type { DesiredState } from '../../identity/model.ts';
import { SourceError } from '../../errors.ts';
import { resolveConfigPath } from '../../config/paths.ts';
import { closestMatch } from '../../config/suggest.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Source } from '../source.ts';
import type { FileSourceConfig } from './schema.ts';
import { normalizeDocument } from './normalize.ts';

const TOP_LEVEL_KEYS = ['users', 'groups'];

export interface FileSourceContext {
  configDir: string;
  logger?: Logger;
}

export class FileSource implements Source {
  readonly describe: string;
  /** Absolute path of the directory file. */
  readonly path: string;
  private readonly logger: Logger | undefined;

  constructor(config: FileSourceConfig, ctx: FileSourceContext) {
    this.path = resolveConfigPath(ctx.configDir, config.path);
    this.describe = `file:${config.path}`;
    this.logger = ctx.logger;
  }

  async read(signal?: AbortSignal): Promise<DesiredState> {
    const doc = await this.load(signal);
    const state = normalizeDocument(doc.users, doc.groups);
    this.logger?.debug({ source: this.describe, ...state.stats, rejected: state.rejected.length }, 'file source read');
    return state;
  }

  async check(signal?: AbortSignal): Promise<string> {
    const state = await this.read(signal);
    const rejected = state.rejected.length > 0 ? `, ${state.rejected.length} rejected entries` : '';
    return `${state.users.length} users, ${state.groups.length} groups${rejected}`;
  }

  private async load(signal?: AbortSignal): Promise<{ users: unknown[]; groups: unknown[] }> {
    let text: string;
    try {
      text = await readFile(this.path, { encoding: 'utf8', ...(signal ? { signal } : {}) });
    } catch (e) {
      if (signal?.aborted) throw e;
      const code = (e as { code?: string }).code ?? 'unknown error';
      throw new SourceError(`${this.describe}: cannot read ${this.path} (${code === 'ENOENT' ? 'no such file' : code})`, { cause: e });
    }
    const parsed = extname(this.path).toLowerCase() === '.json' ? this.parseJson(text) : this.parseYaml(text);
    return this.checkShape(parsed);
  }

  private parseJson(text: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new SourceError(`${this.describe}: not valid JSON (${(e as Error).message})`);
    }
  }

  private parseYaml(text: string): unknown {
    const doc = parseDocument(text, { uniqueKeys: true });
    const first = doc.errors[0];
    if (first) {
      const pos = first.linePos?.[0];
      const where = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
      throw new SourceError(`${this.describe}: not valid YAML${where} (${first.code})`);
    }
    return doc.toJS({ maxAliasCount: 1000 }) as unknown;
  }

  private checkShape(doc: unknown): { users: unknown[]; groups: unknown[] } {
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
      throw new SourceError(`${this.describe}: expected a mapping with \`users:\` and \`groups:\` lists at the top level`);
    }
    const record = doc as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (TOP_LEVEL_KEYS.includes(key)) continue;
      const guess = closestMatch(key, TOP_LEVEL_KEYS);
      throw new SourceError(
        `${this.describe}: unknown top-level key "${key}"${guess ? ` — did you mean "${guess}"?` : '; only `users` and `groups` are allowed'}`,
      );
    }
    for (const key of TOP_LEVEL_KEYS) {
      if (!Array.isArray(record[key])) {
        const fix = key === 'groups' ? ' (write `groups: []` when there are none)' : '';
        throw new SourceError(`${this.describe}: \`${key}\` must be a list${fix}; refusing a partial read`);
      }
    }
    return { users: record['users'] as unknown[], groups: record['groups'] as unknown[] };
  }
}
