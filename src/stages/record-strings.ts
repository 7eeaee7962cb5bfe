// The tag strings of unit records, decoded once per unit: the same few keys and classes come back in every record.

const decoder = new TextDecoder();

/**
 * Strings of the tags: the same few keys and classes come back in every record, so short ones are decoded once
 * and found again by their bytes. One cache for all the records a unit reads.
 */
export class StringCache {
  private readonly map = new Map<number, { b: Uint8Array; s: string }>();

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
