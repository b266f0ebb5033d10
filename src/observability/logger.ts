/**
 * The process logger: pino, JSON lines to stderr (stdout belongs to command output and
 * NDJSON), with credentials redacted by key wherever they appear in a logged object.
 * Secret values (config/secret.ts) already print as `[redacted]`; the paths below catch
 * raw strings that slipped into a log call (a header map, a config object, an error body).
 * With tracing on, a line written inside a span carries its `trace_id` and `span_id`.
 */
import { Writable } from 'node:stream';
import { styleText } from 'node:util';
import { pino, type DestinationStream, type Level, type Logger } from 'pino';
import { REDACTED } from '../config/secret.ts';
import { printable, printableValue } from './printable.ts';
import { activeTraceFields } from './tracing/spans.ts';

export type { Logger };

const SECRET_KEYS = [
  'token',
  'accessToken',
  'apiToken',
  'apiKey',
  'password',
  'bindPassword',
  'secret',
  'clientSecret',
  'authorization',
  'Authorization',
  'cookie',
  'tokenFileContent',
  'passwordFileContent',
];

/** Redaction paths: each secret key at the top level and up to three levels deep, plus header maps. */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`]),
  ...['authorization', '["x-api-key"]', 'cookie', '["set-cookie"]'].flatMap((h) => {
    const key = h.startsWith('[') ? `headers${h}` : `headers.${h}`;
    return [key, `*.${key}`];
  }),
];

export interface LoggerOptions {
  level?: Level | 'silent';
  /** Human-readable lines instead of JSON (for a terminal). */
  pretty?: boolean;
  /** Where lines go; stderr by default. */
  destination?: DestinationStream;
  /** Fields on every line (e.g. `{ tenant }`). */
  base?: Record<string, unknown>;
}

const LEVEL_STYLE: Record<number, { label: string; color: Parameters<typeof styleText>[0] }> = {
  10: { label: 'TRACE', color: 'gray' },
  20: { label: 'DEBUG', color: 'gray' },
  30: { label: 'INFO ', color: 'green' },
  40: { label: 'WARN ', color: 'yellow' },
  50: { label: 'ERROR', color: 'red' },
  60: { label: 'FATAL', color: 'magenta' },
};

/** Turns pino's JSON lines (already redacted) into `12:00:01 INFO  message key=value`. */
export function prettyStream(out: NodeJS.WritableStream = process.stderr): Writable {
  // Colour on a terminal only, and never with NO_COLOR set (https://no-color.org).
  const colour = (out as { isTTY?: boolean }).isTTY === true && !process.env['NO_COLOR'];
  return new Writable({
    write(chunk: Buffer, _enc, done): void {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        let rec: Record<string, unknown>;
        try {
          rec = JSON.parse(line) as Record<string, unknown>;
        } catch {
          out.write(`${printable(line)}\n`);
          continue;
        }
        const { level, time, msg, pid: _pid, hostname: _host, ...rest } = rec;
        const style = LEVEL_STYLE[Number(level)] ?? { label: String(level), color: 'white' };
        const clock = new Date(Number(time)).toISOString().slice(11, 19);
        const label = colour ? styleText(style.color, style.label, { validateStream: false }) : style.label;
        const fields = Object.entries(rest)
          .map(([k, v]) => `${printable(k)}=${printableValue(v)}`)
          .join(' ');
        // Logged values are data (names, server messages): escaped, so none can format the terminal.
        out.write(`${clock} ${label} ${printable(String(msg ?? ''))}${fields ? ` ${fields}` : ''}\n`);
      }
      done();
    },
  });
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const destination = opts.destination ?? (opts.pretty ? prettyStream() : pino.destination({ fd: 2, sync: true }));
  return pino(
    {
      level: opts.level ?? 'info',
      base: opts.base ?? null,
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
      serializers: { err: pino.stdSerializers.err },
      formatters: { level: (_label, number) => ({ level: number }) },
      // trace_id/span_id of the active span (tracing on): a line found in the logs leads to its trace.
      mixin: activeTraceFields,
      // The line's own fields win; without a span (tracing off) the line is left as it is.
      mixinMergeStrategy: (fields: object, trace: object) => ('trace_id' in trace ? Object.assign(trace, fields) : fields),
    },
    destination,
  );
}
