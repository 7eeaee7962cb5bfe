// Records shared by many work cells (an outline across a slide), spilled once: a cell's file holds a pointer in their place.
import { SHARED_FLAG } from './record.js';

/** The file beside a store's unit files that holds its shared records, each once. */
export const SHARED_FILE = 'shared.bin';

/** A pointer: u32 byte length (24) | u32 flags (SHARED_FLAG) | f64 offset in SHARED_FILE | f64 byte length there. */
const POINTER = 24;

export function pointerRecord(offset: number, length: number): Uint8Array {
  const b = new Uint8Array(POINTER);
  const v = new DataView(b.buffer);
  v.setUint32(0, POINTER, true);
  v.setUint32(4, SHARED_FLAG, true);
  v.setFloat64(8, offset, true);
  v.setFloat64(16, length, true);
  return b;
}

/**
 * `bytes` (whole records) as chunks of whole records, each pointer replaced by the records it points to as
 * `read(offset, length)` gives them: `[bytes]` when it holds no pointer. Not joined into one buffer: the units of a
 * 20,000² px class mask read 7 GB of shared records, and joining them made as many bytes of fresh pages again.
 */
export function resolvePointers(bytes: Uint8Array, read: (offset: number, length: number) => Uint8Array): Uint8Array[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: Uint8Array[] = [];
  let at = 0, from = 0;
  while (at + 8 <= bytes.byteLength) {
    const length = v.getUint32(at, true);
    if (length < 8) break;
    if (length === POINTER && (v.getUint32(at + 4, true) & SHARED_FLAG) !== 0) {
      if (at > from) parts.push(bytes.subarray(from, at));
      parts.push(read(v.getFloat64(at + 8, true), v.getFloat64(at + 16, true)));
      from = at + length;
    }
    at += length;
  }
  if (from < bytes.byteLength) parts.push(from === 0 ? bytes : bytes.subarray(from));
  return parts;
}
