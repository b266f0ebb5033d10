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

// One memory mode. V8 lets the heap grow to a multiple (up to 4x) of what survived the last full
// GC before it collects again; a reconcile keeps ~100-200 MB live for its whole run (the plan of
// 100,000 users), so the default multiple alone made an apply of 100,000 users peak at ~800 MB.
// Growing by at most half of the live heap keeps the peak near the live size at a small cost in
// GC time (bench:reconcile). Set before any module loads; read by V8 at every full GC.
const v8 = await import('node:v8');
v8.setFlagsFromString('--heap-growing-percent=50');

const dist = new URL('../dist/main.js', import.meta.url);
await import(existsSync(dist) ? dist.href : new URL('../src/main.ts', import.meta.url).href);
