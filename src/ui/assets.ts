/**
 * The page's only assets, served by the daemon itself (no CDN, works air-gapped). The script
 * is progressive enhancement: everything works without it.
 */
export const CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #57606a; --line: #d0d7de; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --focus: #0969da; --panel: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #30363d; --ok: #3fb950; --bad: #f85149; --warn: #d29922; --focus: #4493f8; --panel: #161b22; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--focus); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -10000px; top: 0; background: var(--bg); padding: .5rem 1rem; }
.skip:focus { left: .5rem; }
header { display: flex; gap: 1.5rem; align-items: baseline; flex-wrap: wrap; padding: .75rem 1.25rem; border-bottom: 1px solid var(--line); background: var(--panel); }
header .brand { font-weight: 700; font-size: 1.1rem; margin: 0; }
header nav ul { list-style: none; display: flex; gap: 1rem; margin: 0; padding: 0; flex-wrap: wrap; }
main { padding: 1rem 1.25rem 3rem; max-width: 90rem; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 0 0 .5rem; }
section { border: 1px solid var(--line); border-radius: 6px; padding: .9rem 1rem; margin: 0 0 1rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 1rem; margin-bottom: 1rem; }
.nowrap { white-space: nowrap; }
.grid > section { margin: 0; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; color: var(--muted); padding-bottom: .25rem; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
.ok { color: var(--ok); } .failed, .bad { color: var(--bad); } .held, .warn { color: var(--warn); }
.badge { display: inline-block; padding: 0 .45rem; border: 1px solid currentColor; border-radius: 1rem; font-size: .85rem; font-weight: 600; }
.muted { color: var(--muted); }
ul.changes { margin: 0; padding-left: 1.1rem; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; overflow-wrap: anywhere; }
form.search { display: flex; gap: .75rem; flex-wrap: wrap; align-items: end; margin-bottom: .75rem; }
form.search div, form.action div { display: flex; flex-direction: column; gap: .15rem; }
label { font-weight: 600; font-size: .9rem; }
input, select, button { font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
button { cursor: pointer; background: var(--panel); font-weight: 600; }
form.action { display: flex; gap: .5rem; align-items: end; flex-wrap: wrap; margin-top: .5rem; }
.notice { border-left: 4px solid var(--ok); padding: .5rem .75rem; background: var(--panel); margin-bottom: 1rem; }
.notice.error { border-color: var(--bad); }
`;

export const JS = `
"use strict";
document.addEventListener("submit", function (e) {
  var msg = e.target instanceof HTMLFormElement ? e.target.getAttribute("data-confirm") : null;
  if (msg && !window.confirm(msg)) e.preventDefault();
});
document.addEventListener("keydown", function (e) {
  if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
  var t = e.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement) return;
  var box = document.getElementById("log-user");
  if (box) { e.preventDefault(); box.focus(); }
});
`;
