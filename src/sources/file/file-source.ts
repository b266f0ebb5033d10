/**
 * A static directory in a YAML or JSON file: `{ users: [...], groups: [...] }`.
 * The whole read fails (SourceError) when the file is missing, unreadable, unparseable or
 * not of that shape — including a misspelled top-level key — because a half-read
 * directory would look like mass departures to the planner. Bad entries inside a good
 * file are rejected one by one (see normalize.ts). JSON is read as a stream, entry by
 * entry (json-entries.ts); YAML is parsed whole (see readYaml).
 */
import { createReadStream } from 'node:fs';
import { readFile, type FileHandle } from 'node:fs/promises';
import { extname } from 'node:path';
import { parseDocument } from 'yaml';
import type { DesiredState } from '../../identity/model.ts';
import { SourceError, isSyncError } from '../../errors.ts';
import { resolveConfigPath } from '../../config/paths.ts';
import type { Logger } from '../../observability/logger.ts';
import { FileBackedSource } from './file-changes.ts';
import type { FileSourceConfig } from './schema.ts';
import { JsonEntryReader } from './json-entries.ts';
import { DirectoryNormalizer, normalizeDocument } from './normalize.ts';
import { isListKey, notAList, notAMapping, TOP_LEVEL_KEYS, unknownKey } from './top-level.ts';

export interface FileSourceContext {
  configDir: string;
  logger?: Logger;
}

/** The directory file, re-read and diffed when it changed (file-changes.ts). */
export class FileSource extends FileBackedSource {
  private readonly logger: Logger | undefined;

  constructor(config: FileSourceConfig, ctx: FileSourceContext) {
    super(resolveConfigPath(ctx.configDir, config.path), `file:${config.path}`);
    this.logger = ctx.logger;
  }

  protected async readFrom(handle: FileHandle | undefined, signal?: AbortSignal): Promise<DesiredState> {
    const state = extname(this.path).toLowerCase() === '.json' ? await this.readJson(handle, signal) : await this.readYaml(handle, signal);
    this.logger?.debug({ source: this.describe, ...state.stats, rejected: state.rejected.length }, 'file source read');
    return state;
  }

  async check(signal?: AbortSignal): Promise<string> {
    const state = await this.read(signal);
    const rejected = state.rejected.length > 0 ? `, ${state.rejected.length} rejected entries` : '';
    return `${state.users.length} users, ${state.groups.length} groups${rejected}`;
  }

  /** JSON: streamed, each entry normalized as it is parsed (json-entries.ts). */
  private async readJson(handle: FileHandle | undefined, signal?: AbortSignal): Promise<DesiredState> {
    const normalizer = new DirectoryNormalizer();
    const reader = new JsonEntryReader(this.describe, (list, raw, index) =>
      list === 'users' ? normalizer.user(raw, index) : normalizer.group(raw, index),
    );
    try {
      const from = handle ? { fd: handle, start: 0, autoClose: false } : {};
      for await (const chunk of createReadStream(this.path, { ...from, ...(signal ? { signal } : {}) }) as AsyncIterable<Buffer>) {
        reader.write(chunk);
      }
    } catch (e) {
      // The reader's SourceErrors (and any bug, which has no `code`) are not read failures.
      if (isSyncError(e) || typeof (e as { code?: unknown }).code !== 'string') throw e;
      throw this.unreadable(e, signal);
    }
    reader.end();
    return normalizer.finish();
  }

  /**
   * YAML: the yaml package composes a whole document before any of it can be used (its
   * parser yields a document only when it ends), so the text is parsed whole and the
   * entries normalized one by one from the tree. Large directories belong in JSON or CSV.
   */
  private async readYaml(handle: FileHandle | undefined, signal?: AbortSignal): Promise<DesiredState> {
    let text: string;
    try {
      // A handle's own position is still at 0: the change tracker reads it by position only.
      text = await readFile(handle ?? this.path, { encoding: 'utf8', ...(signal ? { signal } : {}) });
    } catch (e) {
      throw this.unreadable(e, signal);
    }
    const doc = parseDocument(text, { uniqueKeys: true });
    const first = doc.errors[0];
    if (first) {
      const pos = first.linePos?.[0];
      const where = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
      throw new SourceError(`${this.describe}: not valid YAML${where} (${first.code})`);
    }
    const { users, groups } = this.checkShape(doc.toJS({ maxAliasCount: 1000 }) as unknown);
    return normalizeDocument(users, groups);
  }

  private unreadable(e: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return e;
    const code = (e as { code?: string }).code ?? (e instanceof Error ? e.message : 'unknown error');
    return new SourceError(`${this.describe}: cannot read ${this.path} (${code === 'ENOENT' ? 'no such file' : code})`, { cause: e });
  }

  private checkShape(doc: unknown): { users: unknown[]; groups: unknown[] } {
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw notAMapping(this.describe);
    const record = doc as Record<string, unknown>;
    for (const key of Object.keys(record)) if (!isListKey(key)) throw unknownKey(this.describe, key);
    for (const key of TOP_LEVEL_KEYS) if (!Array.isArray(record[key])) throw notAList(this.describe, key);
    return { users: record['users'] as unknown[], groups: record['groups'] as unknown[] };
  }
}
