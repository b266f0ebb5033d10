/**
 * Active Directory `objectGUID`: 16 bytes where the first three fields are little-endian
 * (Microsoft's GUID struct) and the last eight bytes are in order. The canonical string is
 * what AD tools show, so ids stay recognisable and stable across tools.
 */
export function decodeObjectGuid(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new Error(`objectGUID must be 16 bytes, got ${bytes.length}`);
  const h = (i: number): string => (bytes[i] as number).toString(16).padStart(2, '0');
  const le = (...idx: number[]): string => idx.map(h).join('');
  return [le(3, 2, 1, 0), le(5, 4), le(7, 6), le(8, 9), le(10, 11, 12, 13, 14, 15)].join('-');
}

/** The inverse, for building test directories and for `(objectGUID=\xx…)` filters. */
export function encodeObjectGuid(guid: string): Buffer {
  const hex = guid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new Error('not a GUID string');
  const b = Buffer.from(hex, 'hex');
  const order = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];
  return Buffer.from(order.map((i) => b[i] as number));
}
