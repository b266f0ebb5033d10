/**
 * The two waits at the daemon's start: binding its HTTP port (a taken port is a config
 * problem named by its key, reported before anything touches Redis) and waiting for Redis
 * (the daemon stays up, alive and not ready, until Redis answers; it never exits for it).
 */
import { ConfigError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { ObservabilityServer } from '../observability/http-server.ts';

/** How often a start waiting for Redis asks again, milliseconds. */
const REDIS_WAIT_INTERVAL_MS = 1_000;

/** `server.listen()`, with EADDRINUSE/EACCES/EADDRNOTAVAIL turned into one line naming `key`. */
export async function listenNamingKey(
  server: ObservabilityServer,
  at: { host: string; port: number },
  key: string,
): Promise<{ url: string }> {
  try {
    return await server.listen();
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const where = `${at.host}:${at.port}`;
    if (code === 'EADDRINUSE')
      throw new ConfigError(`${key}: ${where} is already in use by another process; choose a free port or stop that process`);
    if (code === 'EACCES') throw new ConfigError(`${key}: not allowed to listen on ${where} (ports below 1024 need privileges)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw new ConfigError(`daemon.http.host: ${at.host} is not an address of this machine`);
    throw e;
  }
}

/**
 * Resolves true once `probe` succeeds, false when `signal` aborts first. While Redis does not
 * answer, one warning says so (with the address, never a password) and /readyz carries the
 * reason; a second line says when it answers.
 */
export async function untilRedisAnswers(
  probe: () => Promise<true | string>,
  where: string,
  logger: Logger,
  signal: AbortSignal,
): Promise<boolean> {
  let warned = false;
  while (!signal.aborted) {
    const r = await probe();
    if (r === true) {
      if (warned) logger.info({ redis: where }, 'Redis answers: starting the workers');
      return true;
    }
    if (!warned) {
      warned = true;
      logger.warn({ redis: where, reason: r }, 'Redis does not answer: waiting for it (/healthz is up, /readyz reports redis)');
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, REDIS_WAIT_INTERVAL_MS);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
  return false;
}
