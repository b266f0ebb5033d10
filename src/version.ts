import { readFileSync } from 'node:fs';

/**
 * The package version, read at run time so it stays right in both layouts:
 * src/version.ts and dist/version.js are each one level below package.json.
 */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
