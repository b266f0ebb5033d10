/**
 * HTML built from tagged templates that escape every interpolated value. Only another
 * `html` fragment (or an array of them) is inserted as is, so no value can turn into markup.
 * Control and bidi characters in a value are shown as escapes (observability/printable.ts).
 */
import { printable } from '../observability/printable.ts';

export class SafeHtml {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Value = SafeHtml | string | number | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(printable(String(v)));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}
