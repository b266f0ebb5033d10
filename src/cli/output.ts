/**
 * Terminal output helpers. Colour only when the stream is a terminal and NO_COLOR is not
 * set (node:util styleText checks both); JSON output is never coloured.
 */
import { styleText } from 'node:util';

export type Style = Parameters<typeof styleText>[0];

export function paint(style: Style, text: string, stream: NodeJS.WriteStream = process.stdout): string {
  return styleText(style, text, { stream });
}

export function printJson(value: unknown, stream: NodeJS.WritableStream = process.stdout): void {
  stream.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLines(lines: readonly string[], stream: NodeJS.WritableStream = process.stdout): void {
  if (lines.length > 0) stream.write(`${lines.join('\n')}\n`);
}

/** `key   value` rows with the keys padded to one column. */
export function table(rows: ReadonlyArray<readonly [string, string]>): string[] {
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
}
