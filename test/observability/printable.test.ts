/**
 * printable(): every character a terminal acts on or that reorders text is shown as an escape;
 * the pretty log lines and the status page's HTML use it, JSON does not.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, prettyStream } from '../../src/observability/logger.ts';
import { hasUnprintable, printable, printableValue } from '../../src/observability/printable.ts';
import { html } from '../../src/ui/html.ts';

describe('printable', () => {
  it('escapes C0, DEL, C1, CR/LF/tab, NEL, U+2028/2029 and the bidi controls; leaves everything else', () => {
    expect(printable('\u001b]0;pwned\u0007\u001b[2J')).toBe('\\x1b]0;pwned\\x07\\x1b[2J');
    expect(printable('a\r\nDELETION GUARD: none\tb')).toBe('a\\r\\nDELETION GUARD: none\\tb');
    expect(printable('\u0000\u007f\u0080\u0085\u009b\u009f')).toBe('\\x00\\x7f\\x80\\x85\\x9b\\x9f');
    expect(printable('\u2028\u2029')).toBe('\\u2028\\u2029');
    const bidi = '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c';
    expect(printable(bidi)).toBe('\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c');
    const fine = "Zoë Ångström 山田 👩‍💻 O'Brien CN=Doe\\, John <a@b.c> — ∅ → ✗";
    expect(printable(fine)).toBe(fine);
    expect(hasUnprintable(fine)).toBe(false);
    expect(hasUnprintable('x\u202ey')).toBe(true);
  });

  it('is idempotent, and printableValue shows non-strings as escaped JSON', () => {
    const once = printable('\u001b[31mred\u202e');
    expect(printable(once)).toBe(once);
    expect(printableValue({ a: 'x\u001by\u2028' })).toBe('{"a":"x\\u001by\\u2028"}');
    expect(printableValue(undefined)).toBe('');
    expect(printableValue(3)).toBe('3');
  });
});

describe('where it is used', () => {
  it('pretty log lines escape the message and every field; the JSON log keeps values exact', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString('utf8')));
    const logger = createLogger({ level: 'info', destination: prettyStream(out as unknown as NodeJS.WritableStream) });
    logger.warn({ name: 'Eve\u001b]0;pwned\u0007', list: ['a\u202eb'] }, 'user Mallory\r\nDELETION GUARD: none skipped');
    await new Promise((r) => setImmediate(r));
    expect(text).toContain('user Mallory\\r\\nDELETION GUARD: none skipped');
    expect(text).toContain('name=Eve\\x1b]0;pwned\\x07');
    expect(text).toContain('list=["a\\u202eb"]');
    expect(text.trimEnd().split('\n')).toHaveLength(1);

    const json = new PassThrough();
    let raw = '';
    json.on('data', (d: Buffer) => (raw += d.toString('utf8')));
    createLogger({ level: 'info', destination: json }).warn({ name: 'a\u202eb' }, 'x');
    await new Promise((r) => setImmediate(r));
    expect((JSON.parse(raw) as { name: string }).name).toBe('a\u202eb');
  });

  it('the status page shows a control or bidi character as an escape, inside the HTML escaping', () => {
    expect(html`<td>${'<b>Eve\u001b[2J\u202e</b>'}</td>`.text).toBe('<td>&lt;b&gt;Eve\\x1b[2J\\u202e&lt;/b&gt;</td>');
  });
});
