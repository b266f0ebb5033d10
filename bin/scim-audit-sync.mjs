#!/usr/bin/env node
// Launcher: the compiled build (dist/, production image) when present, otherwise the
// TypeScript sources run directly by Node's built-in type stripping (Node >= 22.19).
import { existsSync } from 'node:fs';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `scim-audit-sync needs Node.js 22.19 or newer (this is ${process.versions.node} at ${process.execPath}).\n` +
      'In a checkout, `npm ci` installs Node 24 into node_modules/.bin; `npx scim-audit-sync …` and `npm run …` put it first on PATH.\n' +
      'Or run it directly: node_modules/.bin/node bin/scim-audit-sync.mjs …\n',
  );
  process.exit(2);
}

// --low-memory (or SCIM_AUDIT_SYNC_LOW_MEMORY=1): V8 favours memory over speed. Set before any
// module loads; about 40% less peak RSS for a 100,000-user plan at roughly twice the CPU time.
// (The audit export has a single mode: it needs no such flag to stay small.)
if (process.argv.includes('--low-memory') || process.env.SCIM_AUDIT_SYNC_LOW_MEMORY === '1') {
  process.env.SCIM_AUDIT_SYNC_LOW_MEMORY = '1';
  const v8 = await import('node:v8');
  v8.setFlagsFromString('--optimize-for-size');
}

const dist = new URL('../dist/main.js', import.meta.url);
await import(existsSync(dist) ? dist.href : new URL('../src/main.ts', import.meta.url).href);
