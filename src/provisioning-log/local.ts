/**
 * The one-shot `apply`'s provisioning log: JSON lines in the state directory, and (with
 * `provisioningLog.deliverToSinks`) delivery through the audit sinks with the file-based
 * dead-letter store, right after the apply. The delivery (sinks, their HTTP client and metrics)
 * loads only when configured: a plain apply never loads it.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { LoadedConfig } from '../config/load.ts';
import type { Logger } from '../observability/logger.ts';
import { retentionOf } from './config-schema.ts';
import { FileProvisioningLogStore } from './file-store.ts';
import { ProvisioningLogRecorder } from './recorder.ts';

export function newRunId(now: number = Date.now()): string {
  return `${now.toString(36)}-${randomUUID().slice(0, 8)}`;
}

export function stateDirOf(loaded: Pick<LoadedConfig, 'config' | 'configDir'>): string {
  return resolve(loaded.configDir, loaded.config.state.dir);
}

export function localProvisioningLog(loaded: Pick<LoadedConfig, 'config' | 'configDir'>, logger: Logger): ProvisioningLogRecorder {
  const store = new FileProvisioningLogStore(stateDirOf(loaded), loaded.config.tenant, retentionOf(loaded.config.provisioningLog));
  return new ProvisioningLogRecorder(store, loaded.config.tenant, newRunId(), logger);
}

/** Flush, apply retention, and deliver to the sinks when configured (a sink failure is reported, the position kept). */
export async function finishLocalLog(
  rec: ProvisioningLogRecorder,
  loaded: Pick<LoadedConfig, 'config' | 'configDir'>,
  logger: Logger,
): Promise<void> {
  await rec.finish();
  const cfg = loaded.config;
  if (!cfg.provisioningLog.deliverToSinks || !cfg.audit) return;
  const [{ FileDeadLetterStore }, { auditStateDir }, { createSink }, { deliverRecords }] = await Promise.all([
    import('../audit/dead-letter/file-store.ts'),
    import('../audit/state/file-store.ts'),
    import('../audit/sinks/registry.ts'),
    import('./sink-delivery.ts'),
  ]);
  const deadLetters = new FileDeadLetterStore(auditStateDir(stateDirOf(loaded), cfg.tenant));
  try {
    const res = await deliverRecords({
      store: rec.store,
      sinks: cfg.audit.sinks.map((s) => createSink(s, { configDir: loaded.configDir, logger })),
      deadLetters,
      fieldStyle: cfg.audit.fieldStyle,
      batchSize: cfg.audit.batchSize,
    });
    if (res.delivered > 0)
      logger.info({ delivered: res.delivered, deadLettered: res.deadLettered }, 'provisioning log delivered to the audit sinks');
  } catch (e) {
    logger.warn(
      { err: e instanceof Error ? e.message : String(e) },
      'provisioning log: delivery to the audit sinks failed; the next apply retries from the same record',
    );
  } finally {
    await deadLetters.close();
  }
}
