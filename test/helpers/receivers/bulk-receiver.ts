/**
 * A small Elasticsearch `_bulk`: parses the NDJSON action/document pairs, stores documents
 * per index by `_id`, answers 409 version_conflict for an `_id` it already holds, 429 the
 * first time it sees an `_id` listed in `throttleOnce`, and a mapper_parsing_exception for
 * documents with a `bad` field. Per-item statuses, like the real thing.
 */
import { startHttpReceiver, type HttpReceiver, type Reply } from './http-receiver.ts';

export interface BulkReceiver {
  url: string;
  http: HttpReceiver;
  /** index -> _id -> document */
  indices: Map<string, Map<string, Record<string, unknown>>>;
  throttleOnce: Set<string>;
  /** Scripted whole-request answers, consumed first. */
  script: Reply[];
  /** Expected Authorization header, if any. */
  authorization: string | undefined;
  count(): number;
  close(): Promise<void>;
}

export async function startBulkReceiver(authorization?: string): Promise<BulkReceiver> {
  const r: BulkReceiver = {
    url: '',
    http: undefined as unknown as HttpReceiver,
    indices: new Map(),
    throttleOnce: new Set(),
    script: [],
    authorization,
    count: () => [...r.indices.values()].reduce((n, m) => n + m.size, 0),
    close: async () => r.http.close(),
  };
  r.http = await startHttpReceiver((req) => {
    if (r.authorization !== undefined && req.headers['authorization'] !== r.authorization) {
      return { status: 401, body: { error: { type: 'security_exception', reason: 'unable to authenticate' }, status: 401 } };
    }
    // The ping (GET /) answers the cluster info, as Elasticsearch does.
    if (req.method === 'GET' && req.path === '/')
      return { status: 200, body: { cluster_name: 'test-cluster', version: { number: '8.15.0' } } };
    if (!req.path.startsWith('/_bulk')) return { status: 404, body: { error: 'no handler' } };
    if (req.headers['content-type'] !== 'application/x-ndjson') return { status: 406, body: { error: 'wrong content type' } };
    const scripted = r.script.shift();
    if (scripted) return scripted;
    const lines = req.body.toString('utf8').split('\n');
    if (lines.at(-1) !== '')
      return {
        status: 400,
        body: { error: { type: 'illegal_argument_exception', reason: 'The bulk request must be terminated by a newline' } },
      };
    const items: unknown[] = [];
    for (let i = 0; i + 1 < lines.length; i += 2) {
      const action = JSON.parse(lines[i]!) as { create?: { _index: string; _id: string } };
      const doc = JSON.parse(lines[i + 1]!) as Record<string, unknown>;
      const meta = action.create;
      if (!meta) return { status: 400, body: { error: { type: 'illegal_argument_exception', reason: 'only create is expected' } } };
      const { _index, _id } = meta;
      let index = r.indices.get(_index);
      if (!index) r.indices.set(_index, (index = new Map()));
      if (r.throttleOnce.delete(_id)) {
        items.push({
          create: { _index, _id, status: 429, error: { type: 'es_rejected_execution_exception', reason: 'rejected execution' } },
        });
      } else if (doc['bad'] !== undefined) {
        items.push({
          create: { _index, _id, status: 400, error: { type: 'mapper_parsing_exception', reason: 'failed to parse field [bad]' } },
        });
      } else if (index.has(_id)) {
        items.push({
          create: {
            _index,
            _id,
            status: 409,
            error: { type: 'version_conflict_engine_exception', reason: `[${_id}]: version conflict, document already exists` },
          },
        });
      } else {
        index.set(_id, doc);
        items.push({ create: { _index, _id, status: 201, result: 'created' } });
      }
    }
    return {
      status: 200,
      body: { took: 1, errors: items.some((it) => (it as { create: { status: number } }).create.status >= 300), items },
    };
  });
  r.url = r.http.url;
  return r;
}
