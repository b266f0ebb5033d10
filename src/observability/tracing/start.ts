/**
 * Starts the OpenTelemetry SDK when, and only when, an OTLP endpoint is configured through the
 * standard variables (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) and
 * OTEL_SDK_DISABLED is not true. The SDK and the exporter are imported here on demand: a
 * process without tracing never loads them, and the spans' API calls stay no-ops.
 *
 * Traces go over OTLP/HTTP (JSON) with a batch span processor; sampling, batching, the
 * resource and the propagators follow the standard OTEL_* variables. Headers (a collector's
 * credential) come from the file named by OTEL_EXPORTER_OTLP_HEADERS_FILE, in the format of
 * OTEL_EXPORTER_OTLP_HEADERS (`key=value,key2=value2`, values URL-encoded); they are never logged.
 * Only traces: no metrics or logs pipeline is started (those have their own paths).
 */
import { readFile } from 'node:fs/promises';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { ConfigError } from '../../errors.ts';
import type { Logger } from '../logger.ts';
import { VERSION } from '../../version.ts';
import { markTracingEnabled } from './spans.ts';
import { envValue as set, tracingEndpoint, type Env } from './endpoint.ts';

export { tracingEndpoint } from './endpoint.ts';

export interface Tracing {
  /** Flushes the spans still buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

/** `key=value,key2=value2` (values URL-encoded), as OTEL_EXPORTER_OTLP_HEADERS. */
export function parseHeaderList(text: string, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(/[,\n]/)) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw new ConfigError(`${where}: each entry must be key=value (separated by commas or lines)`);
    let value: string;
    try {
      value = decodeURIComponent(item.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(`${where}: a value is not URL-encoded correctly`);
    }
    out[item.slice(0, eq).trim().toLowerCase()] = value;
  }
  return out;
}

async function headersFromFile(env: Env): Promise<Record<string, string> | undefined> {
  const file = set(env['OTEL_EXPORTER_OTLP_HEADERS_FILE']);
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_HEADERS_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return parseHeaderList(text, `OTEL_EXPORTER_OTLP_HEADERS_FILE (${file})`);
}

/** Between two warnings of the exporter (a collector that is down would warn at every export), ms. */
const DIAG_INTERVAL_MS = 60_000;

/** A diagnostic's text as a log field: header values scrubbed, cut short. */
function scrubbed(parts: unknown[], secrets: string[]): string {
  let text = parts
    .map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : ''))
    .join(' ')
    .trim();
  for (const s of secrets) if (s.length > 0) text = text.split(s).join('[redacted]');
  return text.slice(0, 300);
}

/**
 * The SDK's own warnings and errors (an unreachable or refusing collector) as log lines, at
 * most one a minute.
 */
function bridgeDiagnostics(logger: Logger, secrets: string[]): void {
  let last = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  const log = (message: string, ...args: unknown[]): void => {
    const now = Date.now();
    if (now - last < DIAG_INTERVAL_MS) {
      suppressed++;
      return;
    }
    last = now;
    logger.warn({ detail: scrubbed([message, ...args], secrets), suppressed }, 'tracing: the OTLP exporter reports a problem');
    suppressed = 0;
  };
  const quiet = (): void => undefined;
  diag.setLogger(
    { error: log, warn: log, info: quiet, debug: quiet, verbose: quiet },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}

/** Starts tracing if configured; undefined (nothing loaded) otherwise. */
export async function startTracing(logger: Logger, env: Env = process.env): Promise<Tracing | undefined> {
  const endpoint = tracingEndpoint(env);
  if (endpoint === undefined) return undefined;
  const headers = await headersFromFile(env);
  const secrets = Object.values(headers ?? {});
  bridgeDiagnostics(logger, secrets);
  const [{ NodeSDK }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const sdk = new NodeSDK({
    ...(set(env['OTEL_SERVICE_NAME']) === undefined ? { serviceName: 'scim-audit-sync' } : {}),
    traceExporter: new OTLPTraceExporter(headers ? { headers } : {}),
    // Traces only: no metrics reader, no log processor (the daemon has /metrics and its log lines).
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  markTracingEnabled(true);
  // The endpoint's origin and path only: a URL may carry credentials in its user part.
  logger.info(
    { endpoint: describeEndpoint(endpoint), version: VERSION, headersFile: headers !== undefined },
    'tracing: OTLP/HTTP exporter started',
  );
  return {
    async shutdown() {
      markTracingEnabled(false);
      await sdk.shutdown().catch((e: unknown) => logger.warn({ err: scrubbed([e], secrets) }, 'tracing: flushing the last spans failed'));
    },
  };
}

function describeEndpoint(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'an invalid URL';
  }
}
