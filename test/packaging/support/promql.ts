/**
 * Just enough PromQL reading to check dashboards and alert rules against the daemon's
 * registry: the metric names an expression selects and the label names it matches on.
 * Go-template actions in rule files (`{{ … }}`) are removed first.
 */

/** Functions, keywords and aggregation operators: identifiers followed by `(` or used as modifiers. */
const NOT_METRICS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'quantile',
  'count_values',
  'group',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'rate',
  'irate',
  'increase',
  'delta',
  'idelta',
  'deriv',
  'histogram_quantile',
  'absent',
  'absent_over_time',
  'time',
  'timestamp',
  'label_replace',
  'label_join',
  'max_over_time',
  'min_over_time',
  'avg_over_time',
  'sum_over_time',
  'count_over_time',
  'last_over_time',
  'clamp_min',
  'clamp_max',
  'abs',
  'ceil',
  'floor',
  'round',
  'vector',
  'scalar',
  'sort',
  'sort_desc',
  'changes',
  'resets',
  'predict_linear',
  'label_values',
  'humanize',
  'inf',
  'nan',
]);

export interface Selector {
  metric: string;
  /** Label names in the matchers, e.g. `['namespace', 'result']`. */
  labels: string[];
}

/** Removes Go template actions, string literals inside them included. */
const stripActions = (expr: string): string => expr.replace(/\{\{[\s\S]*?\}\}/g, '');

/** Quoted strings hide metric-looking words (`result="failed"`), but their labels matter; read those first. */
function matcherLabels(body: string): string[] {
  return [...body.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*"/g)].map((m) => m[1] as string);
}

/** Every metric selector of an expression with the labels it matches on. */
export function selectors(expr: string): Selector[] {
  const text = stripActions(expr);
  const out: Selector[] = [];
  // Strings, matchers, ranges and label lists of by/on/without (…) never name metrics.
  const masked = text
    .replace(/"(?:[^"\\]|\\.)*"/g, (s) => ' '.repeat(s.length))
    .replace(/\{[^}]*\}/g, (s) => `{${' '.repeat(s.length - 2)}}`)
    .replace(/\[[^\]]*\]/g, (s) => ' '.repeat(s.length))
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (s) => ' '.repeat(s.length));
  for (const m of masked.matchAll(/(?<![A-Za-z0-9_:$.])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\{)?/g)) {
    const name = m[1] as string;
    if (NOT_METRICS.has(name.toLowerCase()) || /^\d/.test(name)) continue;
    const after = masked.slice((m.index as number) + name.length).trimStart();
    if (after.startsWith('(') && m[2] === undefined) continue; // a function call
    let labels: string[] = [];
    if (m[2] !== undefined) {
      const open = text.indexOf('{', m.index as number);
      const close = text.indexOf('}', open);
      labels = matcherLabels(text.slice(open + 1, close));
    }
    out.push({ metric: name, labels });
  }
  return out;
}

/** Label names grouped or matched on: `by (…)`, `without (…)`, `on (…)`, `ignoring (…)`, `group_left (…)`. */
export function groupingLabels(expr: string): string[] {
  const text = stripActions(expr);
  return [...text.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)].flatMap((m) =>
    (m[1] as string)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}

/** Parentheses, brackets and braces balance (outside string literals). */
export function balanced(expr: string): boolean {
  const text = stripActions(expr).replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const stack: string[] = [];
  for (const c of text) {
    if (c === '(' || c === '[' || c === '{') stack.push(c);
    else if (c in pairs && stack.pop() !== pairs[c]) return false;
  }
  return stack.length === 0;
}
