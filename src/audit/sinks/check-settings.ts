/**
 * The settings of a sink that only its `open()` would refuse (an unreadable token file, a CA
 * file that is missing), checked up front by `validate` and at daemon start. It calls the very
 * functions the sinks call (readSecret, loadTls), so what passes here is what the sink accepts
 * at run time; the URL rule is in each sink's config schema (url.ts). Nothing is connected,
 * written or logged, and no secret value appears in a message.
 */
import type { SinkConfig } from './registry.ts';
import { readSecret } from './secrets.ts';
import { loadTls } from './tls.ts';

/** One line per problem, each naming the key (`audit.sinks[1].tokenFile cannot be read …`). */
export async function checkSinkSettings(sinks: readonly SinkConfig[], configDir: string, keyPrefix = 'audit.sinks'): Promise<string[]> {
  const issues: string[] = [];
  const attempt = async (fn: () => Promise<unknown>): Promise<void> => {
    try {
      await fn();
    } catch (e) {
      issues.push(e instanceof Error ? e.message : String(e));
    }
  };
  await Promise.all(
    sinks.map(async (sink, i) => {
      const at = `${keyPrefix}[${i}]`;
      switch (sink.type) {
        case 'stdout':
        case 'file':
          return;
        case 'http': {
          const auth = sink.auth;
          if (auth?.type === 'bearer') await attempt(() => readSecret(auth.token, auth.tokenFile, configDir, `${at}.auth.token`));
          if (auth?.type === 'basic') await attempt(() => readSecret(auth.password, auth.passwordFile, configDir, `${at}.auth.password`));
          await attempt(() => loadTls(sink.tls, configDir, at));
          return;
        }
        case 'splunk-hec':
          await attempt(() => readSecret(sink.token, sink.tokenFile, configDir, `${at}.token`));
          await attempt(() => loadTls(sink.tls, configDir, at));
          return;
        case 'elasticsearch': {
          const auth = sink.auth;
          if (auth?.type === 'basic') await attempt(() => readSecret(auth.password, auth.passwordFile, configDir, `${at}.auth.password`));
          if (auth?.type === 'api-key') await attempt(() => readSecret(auth.apiKey, auth.apiKeyFile, configDir, `${at}.auth.apiKey`));
          await attempt(() => loadTls(sink.tls, configDir, at));
          return;
        }
        case 'syslog':
          if (sink.protocol === 'tls' || (sink.protocol === 'relp' && sink.relp.tls)) await attempt(() => loadTls(sink.tls, configDir, at));
          return;
      }
    }),
  );
  return issues.sort();
}
