// The tag strings of unit records, decoded once per unit: the same few keys and classes come back in every record.

const decoder = new TextDecoder();

/**
 * Strings of the tags: the same few keys and classes come back in every record, so short ones are decoded once
 * and found again by their bytes. One cache for all the records a unit reads.
 */
export class StringCache {
  private readonly map = new Map<number, { b: Uint8Array; s: string }>();
  private readonly lists = new Map<number, { b: Uint8Array; keys: string[] }>();

  /**
   * The `count` tag keys written together from `start` to `end` (each a u32 length and its bytes), one array for every
   * record of the same keys (read only). Found by a hash of up to 64 of their bytes, then compared whole.
   */
  keyList(src: Uint8Array, start: number, end: number, count: number): string[] {
    const n = end - start;
    let h = n;
    for (let i = start, step = (n >> 6) | 1; i < end; i += step) h = Math.imul(h ^ src[i], 16777619);
    const e = this.lists.get(h);
    if (e !== undefined && e.b.length === n && same(e.b, src, start)) return e.keys;
    const keys = new Array<string>(count);
    for (let i = 0, at = start; i < count; i++) {
      const len = (src[at] | (src[at + 1] << 8) | (src[at + 2] << 16) | (src[at + 3] << 24)) >>> 0;
      keys[i] = this.get(src, at + 4, at + 4 + len);
      at += 4 + len;
    }
    if (this.lists.size < 1024) this.lists.set(h, { b: src.slice(start, end), keys });
    return keys;
  }

  get(src: Uint8Array, start: number, end: number): string {
    const n = end - start;
    if (n > 64) return decoder.decode(src.subarray(start, end));
    let h = n;
    for (let i = start; i < end; i++) h = Math.imul(h ^ src[i], 16777619);
    const e = this.map.get(h);
    if (e !== undefined && e.b.length === n) {
      let same = true;
      for (let i = 0; i < n && same; i++) same = e.b[i] === src[start + i];
      if (same) return e.s;
    }
    const s = decoder.decode(src.subarray(start, end));
    if (this.map.size < 4096) this.map.set(h, { b: src.slice(start, end), s });
    return s;
  }
}

/** Whether `src` holds the bytes of `b` from `start`: a loop for a few keys, a native comparison for many. */
function same(b: Uint8Array, src: Uint8Array, start: number): boolean {
  const n = b.length;
  if (n > 64) return Buffer.from(src.buffer, src.byteOffset + start, n).equals(b);
  for (let i = 0; i < n; i++) if (b[i] !== src[start + i]) return false;
  return true;
}
