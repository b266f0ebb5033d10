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

// Start-up memory (issue #20, bench/lib/startup.ts). A command that has little to do is
// mostly its start-up (loading ~380 modules), and V8 sizes itself for what follows. Until the
// process has done BULK_AFTER_MINOR_GCS scavenges (~that many MB allocated: a tiny plan does
// ~30, a 100,000-user plan gets there within its first second), three settings hold
// (each measured on a `plan` of 10 users, medians of 9 runs; together ~92 → ~78 MB):
// - V8's young generation stays at its initial 1 MB semi-spaces (a start-up keeps most of what
//   it allocates, which grows it to the image's 8 MB semi-spaces: ~8 MB of RSS);
// - Maglev, V8's mid-tier compiler, does not start (~1 MB: code pages and zones spent on Node's
//   module loader): its invocation thresholds are raised out of reach. Not `--no-maglev`, which
//   costs every command ~6 MB (`--version` 55 → 62 MB): a changed compiler switch is one V8
//   checks Node's built-in code cache against;
// - llhttp's WebAssembly (undici's HTTP parser, compiled at the first request) stays at its
//   baseline tier, Liftoff (a tier-up to Turbofan costs ~4 MB of compiler memory).
// Then the young generation may grow and Maglev starts, as V8 has them by default. Not for the
// commands that stream bulk data from their start (`daemon`, `audit`): V8 grows the young
// generation while survival is high, which for an export is its start-up, not its work, so
// held there it stayed small and an export spent up to ~25 % more CPU.
const BULK_AFTER_MINOR_GCS = 100;
const BULK_FROM_START = new Set(['daemon', 'audit']);
const args = process.argv.slice(2);
const command = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '--log-level');
if (!BULK_FROM_START.has(command)) {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  v8.setFlagsFromString('--invocation-count-for-maglev=1000000');
  v8.setFlagsFromString('--invocation-count-for-maglev-osr=1000000');
  v8.setFlagsFromString('--wasm-tiering-budget=2000000000');
  const { PerformanceObserver, constants } = await import('node:perf_hooks');
  let minorGcs = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minorGcs++;
    if (minorGcs < BULK_AFTER_MINOR_GCS) return;
    // Node 24's V8 defaults (llhttp's module is compiled by now: its tier stays).
    v8.setFlagsFromString('--semi-space-growth-factor=2');
    v8.setFlagsFromString('--invocation-count-for-maglev=400');
    v8.setFlagsFromString('--invocation-count-for-maglev-osr=100');
    gcs.disconnect();
  });
  gcs.observe({ entryTypes: ['gc'] });
}

const dist = new URL('../dist/main.js', import.meta.url);
await import(existsSync(dist) ? dist.href : new URL('../src/main.ts', import.meta.url).href);
