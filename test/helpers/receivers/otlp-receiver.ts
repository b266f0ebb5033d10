/**
 * An OTLP/HTTP trace receiver on 127.0.0.1:0 (JSON encoding, what @opentelemetry/exporter-trace-otlp-http
 * sends): records every export request as sent (raw body, headers) and the spans in it,
 * flattened with the attributes of their resource. Built on the recording HTTP receiver.
 */
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from './http-receiver.ts';

export type AttrValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttrValue>;
  resource: Record<string, AttrValue>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  startNs: bigint;
  endNs: bigint;
}

export interface OtlpReceiver {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  /** Every export request as it arrived (body text, headers). */
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

interface JsonKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  status?: { code?: number };
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
}

interface JsonExport {
  resourceSpans?: Array<{ resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: Array<{ spans?: JsonSpan[] }> }>;
}

function attrs(list: JsonKeyValue[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const { key, value } of list ?? []) {
    const v = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
    if (v !== undefined) out[key] = v;
  }
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const receiver: HttpReceiver = await startHttpReceiver((req) => {
    if (req.method !== 'POST' || req.path !== '/v1/traces') return { status: 404, body: {} };
    if (!String(req.headers['content-type']).startsWith('application/json')) return { status: 415, body: {} };
    const doc = JSON.parse(req.body.toString('utf8')) as JsonExport;
    for (const rs of doc.resourceSpans ?? []) {
      const resource = attrs(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            attributes: attrs(s.attributes),
            resource,
            statusCode: s.status?.code ?? 0,
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
          });
    }
    return { status: 200, headers: { 'content-type': 'application/json' }, body: {} };
  });
  return { url: receiver.url, spans, requests: receiver.requests, close: () => receiver.close() };
}

/** The spans of one trace, and lookups over them. */
export function traceOf(spans: ReceivedSpan[], traceId: string) {
  const list = spans.filter((s) => s.traceId === traceId);
  const byId = new Map(list.map((s) => [s.spanId, s]));
  return {
    spans: list,
    named: (name: string) => list.filter((s) => s.name === name),
    parentOf: (s: ReceivedSpan) => byId.get(s.parentSpanId),
    /** Spans whose parent is not in the trace (the root, and any orphan). */
    unparented: () => list.filter((s) => !byId.has(s.parentSpanId)),
  };
}
