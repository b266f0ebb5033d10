/**
 * The token credential: Microsoft's `@azure/identity` (client secret, certificate, or
 * workload identity federation), with `authorityHost` from the config and instance
 * discovery off (a fixed authority: nothing is looked up on other hosts). The library's
 * HTTP goes through the project's dispatcher, so the proxy settings and `caFile` apply to
 * the token endpoint as they do to Graph. The library loads on first use.
 */
import type { ClientSecretCredentialOptions, TokenCredential } from '@azure/identity';
import type { Dispatcher } from 'undici';
import { SourceError } from '../../errors.ts';
import { readBodyCapped } from '../../platform/read-body.ts';
import type { EntraIdSourceConfig } from './schema.ts';

export const GRAPH_SCOPE_SUFFIX = '/.default';
const MAX_TOKEN_RESPONSE_BYTES = 1024 * 1024;

type HttpClient = NonNullable<ClientSecretCredentialOptions['httpClient']>;
type PipelineRequest = Parameters<HttpClient['sendRequest']>[0];
type PipelineResponse = Awaited<ReturnType<HttpClient['sendRequest']>>;
type HttpHeaders = PipelineResponse['headers'];

class Headers implements HttpHeaders {
  private readonly map = new Map<string, { name: string; value: string }>();
  get(name: string): string | undefined {
    return this.map.get(name.toLowerCase())?.value;
  }
  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }
  set(name: string, value: string | number | boolean): void {
    this.map.set(name.toLowerCase(), { name, value: String(value) });
  }
  delete(name: string): void {
    this.map.delete(name.toLowerCase());
  }
  toJSON(options?: { preserveCase?: boolean }): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of this.map) out[options?.preserveCase ? v.name : k] = v.value;
    return out;
  }
  *[Symbol.iterator](): Iterator<[string, string]> {
    for (const [k, v] of this.map) yield [k, v.value];
  }
}

/** `@azure/identity`'s HTTP client interface on undici and the project's dispatcher; bodies bounded. */
export function dispatcherHttpClient(dispatcher: Dispatcher, timeoutMs: number): HttpClient {
  return {
    async sendRequest(req: PipelineRequest): Promise<PipelineResponse> {
      const { request } = await import('undici');
      const headers: Record<string, string> = {};
      for (const [k, v] of req.headers) headers[k] = v;
      // MSAL sends url-encoded forms as strings; nothing else is expected on this path.
      if (req.body !== undefined && req.body !== null && typeof req.body !== 'string')
        throw new SourceError('token request: unsupported request body type');
      const body = typeof req.body === 'string' ? req.body : undefined;
      const signal = req.abortSignal
        ? AbortSignal.any([req.abortSignal as AbortSignal, AbortSignal.timeout(timeoutMs)])
        : AbortSignal.timeout(timeoutMs);
      const res = await request(req.url, {
        method: req.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        dispatcher,
        signal,
      });
      const { text, overflow } = await readBodyCapped(res.body, MAX_TOKEN_RESPONSE_BYTES);
      if (overflow) throw new SourceError(`token endpoint response larger than ${MAX_TOKEN_RESPONSE_BYTES} bytes`);
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
      return { request: req, status: res.statusCode, headers: h, bodyAsText: text };
    },
  };
}

export interface CredentialInput {
  config: EntraIdSourceConfig;
  /** Client secret or certificate PEM (from its file); absent for workload identity. */
  secret: string | undefined;
  dispatcher: Dispatcher;
}

export async function createCredential(o: CredentialInput): Promise<TokenCredential> {
  const identity = await import('@azure/identity');
  const c = o.config;
  const common = {
    authorityHost: c.authorityHost,
    disableInstanceDiscovery: true,
    httpClient: dispatcherHttpClient(o.dispatcher, c.timeoutSeconds * 1000),
    // Token request retries are the library's: a few, short (its pipeline honours Retry-After).
    retryOptions: { maxRetries: 2, retryDelayInMs: 200, maxRetryDelayInMs: 2000 },
    loggingOptions: { allowLoggingAccountIdentifiers: false },
  };
  const cred = c.credential;
  switch (cred.type) {
    case 'clientSecret':
      return new identity.ClientSecretCredential(c.tenantId, c.clientId, o.secret ?? '', common);
    case 'certificate':
      return new identity.ClientCertificateCredential(
        c.tenantId,
        c.clientId,
        { certificate: o.secret ?? '' },
        { ...common, sendCertificateChain: cred.sendCertificateChain },
      );
    case 'workloadIdentity':
      return new identity.WorkloadIdentityCredential({
        ...common,
        tenantId: c.tenantId,
        clientId: c.clientId,
        tokenFilePath: cred.tokenFile,
      });
  }
}

/** The `.default` scope of the configured Graph root (`https://graph.microsoft.com/.default`). */
export function graphScope(graphUrl: string): string {
  return `${new URL(graphUrl).origin}${GRAPH_SCOPE_SUFFIX}`;
}
