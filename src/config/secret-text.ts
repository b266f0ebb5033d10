/**
 * What in a config may hold a secret, decided from the key path and from the value itself, so
 * that messages and summaries can show the key and the problem but never the value.
 * A value is treated as secret when any key on its path names a credential (`token`,
 * `auth.password`, `headers.Authorization`), or when the text looks like one wherever it stands:
 * an HTTP credential (`Bearer …`, `Basic …`, `SSWS …`, `Splunk …`), a URL with a password in
 * it, a JSON Web Token or a PEM private key.
 */
import { REDACTED } from './secret.ts';

export type PathSegment = string | number;

const SECRET_KEY = /(token|password|passwd|secret|apikey|api-key|api_key|auth|authorization|credentials?|cookie|privatekey|private_key)$/i;
const AUTH_SCHEME = /^\s*(bearer|basic|ssws|splunk|apikey|api-key|token|digest|negotiate)\s+\S/i;
const URL_CREDENTIALS = /^([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*):[^/@\s]*@/i;
const JWT = /^[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/;
const PEM_PRIVATE = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

export function isSecretKeyName(key: PathSegment | undefined): boolean {
  return typeof key === 'string' && SECRET_KEY.test(key);
}

/** True when any key on the path names a credential. */
export function isSecretPath(path: readonly PathSegment[]): boolean {
  return path.some(isSecretKeyName);
}

/** True when the text looks like a credential, whatever key it stands under. */
export function looksSecret(text: string): boolean {
  return AUTH_SCHEME.test(text) || URL_CREDENTIALS.test(text) || JWT.test(text.trim()) || PEM_PRIVATE.test(text);
}

/** `redis://user:pw@host` → `redis://user:[redacted]@host`; other strings unchanged. */
export function maskUrlCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, `$1:${REDACTED}@`);
}

/**
 * The text to show for a value in a message: URLs keep everything but the password, and any
 * other secret-looking value (or a value under a secret key) becomes a description of its kind.
 */
export function showableValue(text: string, path: readonly PathSegment[]): string | undefined {
  if (isSecretPath(path)) return undefined;
  if (URL_CREDENTIALS.test(text)) return maskUrlCredentials(text);
  return looksSecret(text) ? undefined : text;
}
