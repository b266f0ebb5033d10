/**
 * Whether tracing is on: an OTLP endpoint in the standard variables, and the SDK not disabled.
 * Free of imports, so a command can ask without loading anything of OpenTelemetry.
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** A variable's trimmed value; undefined when unset or blank. */
export const envValue = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

/** The endpoint the traces go to, or undefined when tracing is off. */
export function tracingEndpoint(env: Env = process.env): string | undefined {
  if (envValue(env['OTEL_SDK_DISABLED'])?.toLowerCase() === 'true') return undefined;
  if (envValue(env['OTEL_TRACES_EXPORTER'])?.toLowerCase() === 'none') return undefined;
  return envValue(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) ?? envValue(env['OTEL_EXPORTER_OTLP_ENDPOINT']);
}
