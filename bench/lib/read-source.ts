/**
 * Child process for attributing memory: reads the configured provisioning source and
 * nothing else, then exits (`node bench/lib/read-source.ts <config>`). Its peak RSS,
 * next to the full `plan`, shows how much of the planning peak the source read alone is.
 */
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createSource, sourceContext } from '../../src/sources/registry.ts';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: read-source.ts <config.yaml>');
const loaded = await loadConfig(path);
if (!loaded.config.provisioning) throw new Error('the config has no provisioning section');
const source = createSource(loaded.config.provisioning.source, sourceContext(loaded, createLogger({ level: 'silent' })));
const desired = await source.read();
await source.close?.();
process.stdout.write(`${JSON.stringify({ users: desired.users.length, groups: desired.groups.length })}\n`);
