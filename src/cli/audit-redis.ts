/**
 * The one-shot audit commands' Redis: opened here (the wiring) when `redis:` is configured and
 * handed to the audit runtime, so the engine never imports the job layer. ioredis is loaded
 * only then: the file-only CLI never loads it.
 */
import type { LoadedConfig } from '../config/load.ts';
import type { AuditRedis } from '../audit/runtime.ts';

export interface OpenedAuditRedis extends AuditRedis {
  close(): Promise<void>;
}

export async function openAuditRedis(loaded: LoadedConfig): Promise<OpenedAuditRedis | undefined> {
  if (!loaded.config.redis) return undefined;
  const { redisFactory } = await import('../jobs/redis.ts');
  const factory = redisFactory(loaded);
  const client = await factory.connect('audit-state');
  return {
    client,
    keyPrefix: factory.keyPrefix,
    close: () =>
      client.quit().then(
        () => undefined,
        () => client.disconnect(),
      ),
  };
}
