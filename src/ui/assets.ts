/**
 * The page's only assets, served by the daemon itself (no CDN, works air-gapped): its CSS and
 * script, and uPlot (the chart library) read from the uplot package in node_modules. The script
 * is progressive enhancement: everything works without it, the charts' numbers are in the run
 * tables too.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** uPlot's browser build and stylesheet, read once; undefined when the package is missing. */
export const UPLOT_FILES = { 'uplot.js': 'uPlot.iife.min.js', 'uplot.css': 'uPlot.min.css' } as const;
const cache = new Map<string, Promise<string | undefined>>();

export function uplotAsset(name: keyof typeof UPLOT_FILES): Promise<string | undefined> {
  let p = cache.get(name);
  if (!p) {
    p = (async () => {
      try {
        // The package's main is dist/uPlot.cjs.js; the browser files sit beside it.
        const dist = dirname(createRequire(import.meta.url).resolve('uplot'));
        return await readFile(join(dist, UPLOT_FILES[name]), 'utf8');
      } catch {
        return undefined;
      }
    })();
    cache.set(name, p);
  }
  return p;
}
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
header .who { margin: 0 0 0 auto; display: flex; gap: .5rem; align-items: baseline; }
header .who button { padding: .1rem .5rem; }
form.login { display: flex; flex-direction: column; gap: .75rem; max-width: 22rem; }
form.login div { display: flex; flex-direction: column; gap: .15rem; }
.id { white-space: nowrap; color: var(--muted); font-size: .9em; }
.id .mono { overflow-wrap: normal; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1rem; }
figure.chart { margin: 0; min-width: 0; }
figure.chart figcaption { color: var(--muted); font-size: .9rem; margin-bottom: .25rem; }
.plot { min-height: 12rem; }
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
function drawCharts() {
  var el = document.getElementById("chart-data");
  if (!el || typeof window.uPlot !== "function") return;
  var d = JSON.parse(el.textContent || "{}");
  var css = getComputedStyle(document.documentElement);
  var color = function (v, dflt) { return css.getPropertyValue(v).trim() || dflt; };
  var fg = color("--muted", "#57606a"), grid = color("--line", "#d0d7de");
  var axis = function (label) { return { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, label: label }; };
  function plot(id, data, series, label) {
    var fig = document.getElementById(id);
    if (!fig) return;
    var box = fig.querySelector(".plot");
    var width = Math.max(240, Math.floor(box.getBoundingClientRect().width) || 360);
    new window.uPlot({
      width: width,
      height: 180,
      series: [{}].concat(series.map(function (s) {
        return { label: s.label, stroke: s.stroke, width: 2, points: { show: true, size: 5, fill: s.stroke } };
      })),
      axes: [axis(), axis(label)],
      scales: { x: { time: true } },
    }, data, box);
    fig.setAttribute("data-drawn", "true");
  }
  var focus = color("--focus", "#0969da"), ok = color("--ok", "#1a7f37"), bad = color("--bad", "#cf222e"), warn = color("--warn", "#9a6700");
  var r = d.reconcile, a = d.auditLag;
  if (r && r.t.length > 0) {
    plot("chart-duration", [r.t, r.values.duration], [{ label: "duration (s)", stroke: focus }], "s");
    plot("chart-changes", [r.t, r.values.changes, r.values.failures], [{ label: "changes", stroke: ok }, { label: "failures", stroke: bad }], "count");
  }
  if (a && a.t.length > 0) plot("chart-audit-lag", [a.t, a.values.lag], [{ label: "audit lag (s)", stroke: warn }], "s");
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", drawCharts);
else drawCharts();
`;
