/**
 * Every sink type's config, chosen by `type`, and the factory that builds a sink from it.
 * Add a sink: a folder with config.ts / encoder.ts / sink.ts, one schema in the union and
 * one case in `createSink`.
 */
import { z } from 'zod';
import type { SinkContext } from './context.ts';
import type { Sink } from './sink.ts';
import { elasticsearchSinkSchema } from './elasticsearch/config.ts';
import { ElasticsearchSink } from './elasticsearch/sink.ts';
import { fileSinkSchema } from './file/config.ts';
import { FileSink } from './file/sink.ts';
import { httpSinkSchema } from './http/config.ts';
import { HttpSink } from './http/sink.ts';
import { splunkHecSinkSchema } from './splunk-hec/config.ts';
import { SplunkHecSink } from './splunk-hec/sink.ts';
import { stdoutSinkSchema } from './stdout/config.ts';
import { StdoutSink } from './stdout/sink.ts';
import { syslogSinkSchema } from './syslog/config.ts';
import { SyslogSink } from './syslog/sink.ts';

export type { SinkContext } from './context.ts';

export const sinkConfigSchema = z.discriminatedUnion('type', [
  stdoutSinkSchema,
  fileSinkSchema,
  httpSinkSchema,
  splunkHecSinkSchema,
  elasticsearchSinkSchema,
  syslogSinkSchema,
]);
export type SinkConfig = z.infer<typeof sinkConfigSchema>;
/** What a YAML file may contain (defaults not yet applied). */
export type SinkConfigInput = z.input<typeof sinkConfigSchema>;
export type SinkType = SinkConfig['type'];

/** The `audit.sinks` list: at least one sink, names unique (they key metrics, dead letters and replay). */
export const sinksConfigSchema = z
  .array(sinkConfigSchema)
  .min(1, 'configure at least one audit sink')
  .superRefine((sinks, ctx) => {
    const seen = new Set<string>();
    sinks.forEach((s, i) => {
      if (seen.has(s.name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate sink name "${s.name}": every sink needs a unique name` });
      seen.add(s.name);
    });
  });

/**
 * Builds a sink; nothing is opened or read yet (secrets and TLS files are read by `open()`).
 * Throws ConfigError for a config zod cannot check alone (an invalid or insecure URL).
 */
export function createSink(config: SinkConfig, ctx: SinkContext): Sink {
  switch (config.type) {
    case 'stdout':
      return new StdoutSink(config, ctx);
    case 'file':
      return new FileSink(config, ctx);
    case 'http':
      return new HttpSink(config, ctx);
    case 'splunk-hec':
      return new SplunkHecSink(config, ctx);
    case 'elasticsearch':
      return new ElasticsearchSink(config, ctx);
    case 'syslog':
      return new SyslogSink(config, ctx);
  }
}
