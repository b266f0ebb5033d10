/**
 * The spans of the sync, through `@opentelemetry/api` only: without a registered SDK (tracing
 * off, the default) every helper here is a pass-through that allocates nothing and touches no
 * context. Span names and attributes are closed vocabularies: a tenant id, counts, outcomes,
 * error codes, HTTP methods, statuses and path templates. Never a userName, an e-mail, a
 * display name, a credential, a query string or an error message (they may quote any of these).
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { VERSION } from '../../version.ts';

let enabled = false;

/** Called once an SDK is registered (start.ts); tests of the off state never call it. */
export function markTracingEnabled(on: boolean): void {
  enabled = on;
}

const tracer = () => trace.getTracer('scim-audit-sync', VERSION);

/** Where a span sits in its trace, and which throws are not its failure. */
export interface SpanOptions {
  /** Start a new trace (a run's root) instead of continuing the active one. */
  root?: boolean;
  /** Parent taken from elsewhere (a job's trace carrier) instead of the active context. */
  parent?: Context;
  kind?: SpanKind;
  /**
   * A throw that is not a failure (a job moved back to wait): its result label, recorded as
   * `scimsync.result` without an error status; undefined for a real failure.
   */
  expected?: (e: unknown) => string | undefined;
}

/** The part of a span the code around it may touch: attributes only (see the vocabulary above). */
export interface SpanHandle {
  set(attrs: Attributes): void;
  /** The trace id, '' when tracing is off or the span is not sampled. */
  readonly traceId: string;
}

const NO_SPAN: SpanHandle = { set: () => undefined, traceId: '' };

/** The stable code of a failure, for `error.type`: never free text. */
export function errorType(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? code : e instanceof Error ? e.name : 'unknown';
}

function handle(span: Span): SpanHandle {
  const sc = span.spanContext();
  return { set: (a) => void span.setAttributes(a), traceId: span.isRecording() ? sc.traceId : '' };
}

/**
 * Runs `fn` inside a span named `name` (active for everything `fn` awaits: HTTP client spans,
 * nested spans, log lines). A thrown error marks the span failed with its code (`error.type`,
 * never the message) and is rethrown.
 */
export async function withSpan<T>(
  name: string,
  attrs: Attributes,
  fn: (span: SpanHandle) => Promise<T>,
  opts: SpanOptions = {},
): Promise<T> {
  if (!enabled) return fn(NO_SPAN);
  const parent = opts.root ? ROOT_CONTEXT : (opts.parent ?? context.active());
  return tracer().startActiveSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: attrs, root: opts.root === true },
    parent,
    async (span) => {
      try {
        return await fn(handle(span));
      } catch (e) {
        const result = opts.expected?.(e);
        if (result === undefined) failSpan(span, e);
        else span.setAttribute('scimsync.result', result);
        throw e;
      } finally {
        span.end();
      }
    },
  );
}

function failSpan(span: Span, e: unknown): void {
  const type = errorType(e);
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

/** W3C trace context of the active span, for a job's data; undefined when there is none. */
export function traceCarrier(): Record<string, string> | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier['traceparent'] === undefined ? undefined : carrier;
}

/** The context a job's trace carrier continues (a chunk job on any replica). */
export function contextFromCarrier(carrier: Record<string, string> | undefined): Context | undefined {
  if (!enabled || carrier === undefined) return undefined;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

const NO_FIELDS: { trace_id?: string; span_id?: string } = Object.freeze({});

/** trace_id/span_id of the active span, for a log line; empty when none is recording. */
export function activeTraceFields(): { trace_id?: string; span_id?: string } {
  if (!enabled) return NO_FIELDS;
  const span = trace.getSpan(context.active());
  if (span === undefined || !span.isRecording()) return NO_FIELDS;
  const sc = span.spanContext();
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

/** An HTTP client span: one per attempt, ended once with its status or failure. */
export interface ClientSpan {
  /** The request's headers with `traceparent` (and `tracestate`) of this span added. */
  headers(base: Record<string, string>): Record<string, string>;
  end(outcome: { status: number } | { error: unknown }): void;
}

const NO_CLIENT_SPAN: ClientSpan = { headers: (b) => b, end: () => undefined };

/**
 * Starts a client span for one HTTP attempt (`method`, a path template, the server's host).
 * `attrs` may add closed-set fields (the route label, the sink's name).
 */
export function startClientSpan(method: string, pathTemplate: string, server: URL, attempt: number, attrs: Attributes = {}): ClientSpan {
  if (!enabled) return NO_CLIENT_SPAN;
  const span = tracer().startSpan(`${method} ${pathTemplate}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      'url.template': pathTemplate,
      'server.address': server.hostname,
      'server.port': Number(server.port || (server.protocol === 'https:' ? 443 : 80)),
      ...(attempt > 1 ? { 'http.request.resend_count': attempt - 1 } : {}),
      ...attrs,
    },
  });
  const ctx = trace.setSpan(context.active(), span);
  let ended = false;
  return {
    headers(base) {
      const carrier: Record<string, string> = { ...base };
      propagation.inject(ctx, carrier);
      return carrier;
    },
    end(outcome) {
      if (ended) return;
      ended = true;
      if ('status' in outcome) {
        span.setAttribute('http.response.status_code', outcome.status);
        if (outcome.status >= 400) {
          span.setAttribute('error.type', String(outcome.status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      } else failSpan(span, outcome.error);
      span.end();
    },
  };
}
