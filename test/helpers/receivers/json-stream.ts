/** Splits HEC's concatenated JSON objects (`{…}{…}` or newline separated) into parsed values. */
export function parseConcatenatedJson(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}') {
      depth--;
      if (depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
    } else if (depth === 0 && !/\s/.test(c ?? '')) {
      throw new Error(`garbage between objects at ${i}`);
    }
  }
  if (depth !== 0) throw new Error('truncated JSON stream');
  return out;
}
