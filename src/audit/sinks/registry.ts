/**
 * The factory that builds a sink from its config (schemas: schema.ts, re-exported here).
 * Add a sink: a folder with config.ts / encoder.ts / sink.ts, one schema in the union of
 * schema.ts and one case in `createSink`.
 */
import type { SinkContext } from './context.ts';
import type { Sink } from './sink.ts';
import type { SinkConfig } from './schema.ts';
import { ElasticsearchSink } from './elasticsearch/sink.ts';
import { FileSink } from './file/sink.ts';
import { HttpSink } from './http/sink.ts';
import { SplunkHecSink } from './splunk-hec/sink.ts';
import { StdoutSink } from './stdout/sink.ts';
import { SyslogSink } from './syslog/sink.ts';

export type { SinkContext } from './context.ts';
export { sinkConfigSchema, sinksConfigSchema, type SinkConfig, type SinkConfigInput, type SinkType } from './schema.ts';

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
