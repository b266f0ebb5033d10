/**
 * Every sink type's config, chosen by `type`: the config schemas only, so loading a config
 * (plan, validate, the daemon) never loads the sink implementations or their HTTP client and
 * metrics. The implementations are built in registry.ts (`createSink`).
 */
import { z } from 'zod';
import { elasticsearchSinkSchema } from './elasticsearch/config.ts';
import { fileSinkSchema } from './file/config.ts';
import { httpSinkSchema } from './http/config.ts';
import { splunkHecSinkSchema } from './splunk-hec/config.ts';
import { stdoutSinkSchema } from './stdout/config.ts';
import { syslogSinkSchema } from './syslog/config.ts';

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
