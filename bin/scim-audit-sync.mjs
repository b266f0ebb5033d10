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

// No V8, Node or allocator flags: the process runs with Node's defaults, which size the heap
// from the memory the process may use (a container's limit). Memory is the data structures' job.

const dist = new URL('../dist/main.js', import.meta.url);
await import(existsSync(dist) ? dist.href : new URL('../src/main.ts', import.meta.url).href);
