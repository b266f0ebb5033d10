/**
 * `node --import test/helpers/record-modules.ts …`: writes every module the process resolved
 * (ESM imports and CommonJS requires alike, as URLs: file:///…/node_modules/zod/…, node:http)
 * to the file named by RECORD_MODULES_OUT when the process exits. Used by the lazy-import test.
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env['RECORD_MODULES_OUT'];
const seen = new Set<string>();
if (out !== undefined) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      seen.add(resolved.url);
      return resolved;
    },
  });
  process.on('exit', () => writeFileSync(out, [...seen].join('\n')));
}
