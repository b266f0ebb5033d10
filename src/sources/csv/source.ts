/**
 * The CSV source: an HR export with one row per user. The header is validated before any
 * row is used; a bad row becomes a rejection with its line number and the read goes on; a
 * file that cannot be read to the end (missing, unterminated quote) fails the whole read.
 */
import { createReadStream } from 'node:fs';
import { access, type FileHandle } from 'node:fs/promises';
import type { CsvError } from 'csv-parse';
import { resolveConfigPath } from '../../config/paths.ts';
import { DuplicateIndex } from '../../identity/duplicates.ts';
import type { DesiredState, NormalizedGroup, NormalizedUser, SourceRejection } from '../../identity/model.ts';
import { admitUser } from '../../identity/admit.ts';
import { validateGroup } from '../../identity/validate-user.ts';
import { SourceError, isSyncError } from '../../errors.ts';
import type { Source } from '../source.ts';
import { FileBackedSource } from '../file/file-changes.ts';
import { indexHeader } from './header.ts';
import { rowMapper, type RowMapper } from './row.ts';
import type { CsvSourceConfig } from './schema.ts';

export interface CsvSourceContext {
  configDir: string;
}

/** Stable id of a group that exists only as a name in the groups column. */
export function csvGroupId(name: string): string {
  return `csv:${name.normalize('NFC').toLowerCase()}`;
}

/** The export, re-read and diffed when it changed (file/file-changes.ts). */
export class CsvSource extends FileBackedSource {
  private readonly config: CsvSourceConfig;

  constructor(config: CsvSourceConfig, ctx: CsvSourceContext) {
    super(resolveConfigPath(ctx.configDir, config.path), `csv:${config.path}`);
    this.config = config;
  }

  protected async readFrom(handle: FileHandle | undefined, signal?: AbortSignal): Promise<DesiredState> {
    try {
      return await this.parseFile(handle, signal);
    } catch (e) {
      signal?.throwIfAborted();
      if (isSyncError(e)) throw e;
      const code = (e as { code?: string }).code;
      throw new SourceError(`${this.path}: cannot read the CSV file (${code ?? (e instanceof Error ? e.message : String(e))})`, {
        cause: e,
      });
    }
  }

  async check(signal?: AbortSignal): Promise<string> {
    const s = await this.read(signal);
    return `${s.users.length} users, ${s.groups.length} groups, ${s.rejected.length} rejected rows`;
  }

  private async parseFile(handle: FileHandle | undefined, signal: AbortSignal | undefined): Promise<DesiredState> {
    if (handle === undefined) await access(this.path); // a missing file fails here with ENOENT, before any parsing
    const { parse } = await import('csv-parse'); // loaded by a CSV read only, not with the source registry
    const c = this.config;
    const rejected: SourceRejection[] = [];
    let fatal: SourceError | undefined;
    let skipped = 0;
    const from = handle ? { fd: handle, start: 0, autoClose: false } : {};
    const parser = createReadStream(this.path, { ...from, ...(signal ? { signal } : {}) }).pipe(
      parse({
        delimiter: c.delimiter,
        bom: true,
        info: true,
        relax_column_count: true,
        skip_empty_lines: true,
        skip_records_with_error: true,
        on_skip: (err: CsvError | undefined) => {
          const line = (err as { lines?: number } | undefined)?.lines;
          // An unterminated quote swallows every row after it: those users would vanish.
          if (err?.code === 'CSV_QUOTE_NOT_CLOSED')
            fatal = new SourceError(
              `${this.path}: unterminated quoted field (reached the end of the file at line ${line ?? '?'}); the rows after the opening quote cannot be read`,
            );
          else {
            skipped++;
            rejected.push({ kind: 'row', ref: `${this.path}:${line ?? '?'}`, reason: err?.message ?? 'malformed CSV' });
          }
          return undefined;
        },
      }),
    );

    let header: string[] | undefined;
    let map: RowMapper | undefined;
    const users: NormalizedUser[] = [];
    const lines: number[] = []; // position in `users` → its line
    const index = new DuplicateIndex<number>('userName', (at) => ({
      ref: `${this.path}:${lines[at]}`,
      name: (users[at] as NormalizedUser).userName,
    }));
    const groups = new Map<string, { displayName: string; members: Set<string> }>();
    let rows = 0;
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (header === undefined) {
        header = record;
        map = rowMapper(c, indexHeader(record, c.columns, this.path));
        continue;
      }
      rows++;
      const ref = `${this.path}:${info.lines}`;
      if (record.length !== header.length) {
        rejected.push({ kind: 'row', ref, reason: `expected ${header.length} fields like the header, got ${record.length}` });
        continue;
      }
      const r = (map as RowMapper)(record);
      if (!r.ok) {
        rejected.push({
          kind: 'row',
          ref,
          reason: r.reason,
          ...rowIdentity(r.identity.externalId, r.identity.userName, r.identity.groups),
        });
        continue;
      }
      // A name in the groups column follows the group rules; the row is rejected before it is admitted.
      const badGroup = r.groups.map((name) => validateGroup({ externalId: csvGroupId(name), displayName: name })).find((g) => !g.ok);
      const admitted =
        badGroup && !badGroup.ok
          ? { ok: false as const, reason: `${c.columns.groups} (groups): ${badGroup.reason}` }
          : admitUser(r.user, index, users.length);
      if (!admitted.ok) {
        rejected.push({ kind: 'row', ref, reason: admitted.reason, ...rowIdentity(r.user.externalId, r.user.userName, r.groups) });
        continue;
      }
      const user = admitted.value;
      lines.push(info.lines);
      users.push(user);
      for (const raw of r.groups) {
        const name = raw.normalize('NFC');
        const id = csvGroupId(name);
        let g = groups.get(id);
        if (!g) groups.set(id, (g = { displayName: name, members: new Set() }));
        g.members.add(r.user.externalId);
      }
    }
    if (fatal) throw fatal;
    if (header === undefined) throw new SourceError(`${this.path}: the file is empty (no header row)`);
    if (users.length === 0 && !c.allowEmpty) {
      throw new SourceError(
        `${this.path}: no usable rows (${rows} data rows, ${rejected.length} rejected): refusing an empty directory (set allowEmpty: true if that is intended)`,
      );
    }
    const out: NormalizedGroup[] = [...groups].map(([externalId, g]) => ({
      externalId,
      displayName: g.displayName,
      members: [...g.members],
    }));
    // The parser reports malformed rows ahead of the records it still buffers: order by line.
    const line = (r: SourceRejection): number => Number(/:(\d+)$/.exec(r.ref)?.[1] ?? 0);
    rejected.sort((a, b) => line(a) - line(b));
    return { users, groups: out, rejected, stats: { rows: rows + skipped, rowsRejected: rejected.length } };
  }
}

/** The identity fields of a rejected row (SourceRejection); its groups by their csv group ids. */
function rowIdentity(externalId: string | undefined, userName: string | undefined, groups: string[]): Partial<SourceRejection> {
  return {
    ...(externalId !== undefined ? { externalId } : {}),
    ...(userName !== undefined ? { userName } : {}),
    ...(groups.length > 0 ? { memberOf: groups.map(csvGroupId) } : {}),
  };
}

export function createCsvSource(config: CsvSourceConfig, ctx: CsvSourceContext): Source {
  return new CsvSource(config, ctx);
}
