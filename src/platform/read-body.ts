/**
 * A response body as UTF-8 text, read chunk by chunk up to `maxBytes`. Past the cap the body
 * is destroyed (the rest is never downloaded) and `overflow` is set; `text` then holds the
 * chunks read before the cap. Each caller decides what too large means for it.
 */
export interface CappedText {
  text: string;
  overflow: boolean;
}

export interface CappableBody extends AsyncIterable<unknown> {
  destroy(): unknown;
  on(event: 'error', listener: (e: Error) => void): unknown;
}

export async function readBodyCapped(body: CappableBody, maxBytes: number): Promise<CappedText> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    if (size + buf.length > maxBytes) {
      // Nobody reads the rest: the abort error the destroy emits is not a failure.
      body.on('error', () => undefined);
      body.destroy();
      return { text: Buffer.concat(chunks, size).toString('utf8'), overflow: true };
    }
    size += buf.length;
    chunks.push(buf);
  }
  return { text: Buffer.concat(chunks, size).toString('utf8'), overflow: false };
}
