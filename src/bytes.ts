// Growable byte buffers shared by the encoders, the unit records and the reading thread's parse batches.

const utf8 = new TextEncoder();

/** Whether this machine stores numbers little-endian: typed arrays read samples in its order. */
export const NATIVE_LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** `buf` with room for `n` more bytes after `pos` (doubling, so appends stay amortised O(1)). */
export function grown<B extends Uint8Array>(buf: B, pos: number, n: number): B | Uint8Array<ArrayBuffer> {
  if (pos + n <= buf.length) return buf;
  let len = buf.length * 2;
  while (len < pos + n) len *= 2;
  const b = new Uint8Array(len);
  b.set(buf.subarray(0, pos));
  return b;
}

/**
 * Append-only storage for many short byte strings (feature heads, unit records): one buffer instead of one small
 * Uint8Array each, each of which would get its own off-heap backing store for the GC to track.
 */
export class ByteArena {
  buf: Uint8Array;
  pos = 0;
  /** A new buffer of `init` bytes, or the buffer given (whatever it holds is written over). */
  constructor(init: number | Uint8Array = 1 << 16) { this.buf = typeof init === 'number' ? new Uint8Array(init) : init; }

  /** Appends the string's UTF-8 bytes; returns where they start (they end at `pos`). */
  add(s: string): number {
    const start = this.pos;
    this.reserve(s.length);
    const buf = this.buf;
    let p = start;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        const bytes = utf8.encode(s);
        this.pos = start;
        this.reserve(bytes.length);
        this.buf.set(bytes, start);
        this.pos = start + bytes.length;
        return start;
      }
      buf[p++] = c;
    }
    this.pos = p;
    return start;
  }

  /** Appends bytes; returns where they start. */
  addBytes(b: Uint8Array): number {
    const start = this.pos;
    this.reserve(b.length);
    this.buf.set(b, start);
    this.pos = start + b.length;
    return start;
  }

  private reserve(n: number): void {
    this.buf = grown(this.buf, this.pos, n);
  }
}
