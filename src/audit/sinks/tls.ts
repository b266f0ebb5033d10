/**
 * TLS settings shared by the HTTP-based sinks and syslog over TLS: an extra CA, an optional
 * client certificate, hostname override. Verification stays on unless explicitly disabled.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError, errorCodeOf } from '../../errors.ts';
import { resolvePath } from './secrets.ts';

export const tlsSchema = z
  .strictObject({
    /** PEM bundle of CAs to trust; it replaces the system CA store (Node's `ca`). */
    caFile: z.string().min(1).optional(),
    /** Client certificate (PEM) for mutual TLS. */
    certFile: z.string().min(1).optional(),
    /** Client private key (PEM) for mutual TLS. */
    keyFile: z.string().min(1).optional(),
    /** Keep `true` in production: `false` accepts any certificate. */
    rejectUnauthorized: z.boolean().default(true),
    /** SNI / certificate name to verify when it differs from the host. */
    servername: z.string().min(1).optional(),
  })
  .refine((t) => (t.certFile === undefined) === (t.keyFile === undefined), {
    message: 'tls.certFile and tls.keyFile go together (mutual TLS needs both)',
    path: ['certFile'],
  })
  .prefault({});
export type TlsConfig = z.infer<typeof tlsSchema>;

export interface TlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  servername?: string;
}

export async function loadTls(cfg: TlsConfig, configDir: string, keyPath: string): Promise<TlsOptions> {
  const read = async (file: string | undefined, key: string): Promise<string | undefined> => {
    if (file === undefined) return undefined;
    try {
      return await readFile(resolvePath(configDir, file), 'utf8');
    } catch (e) {
      throw new ConfigError(`${keyPath}.tls.${key} cannot be read (${errorCodeOf(e) ?? 'error'}): ${file}`);
    }
  };
  const out: TlsOptions = { rejectUnauthorized: cfg.rejectUnauthorized };
  const ca = await read(cfg.caFile, 'caFile');
  const cert = await read(cfg.certFile, 'certFile');
  const key = await read(cfg.keyFile, 'keyFile');
  if (ca !== undefined) out.ca = ca;
  if (cert !== undefined) out.cert = cert;
  if (key !== undefined) out.key = key;
  if (cfg.servername !== undefined) out.servername = cfg.servername;
  return out;
}
