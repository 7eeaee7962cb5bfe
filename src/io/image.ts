// Image headers (TIFF, PNG, JPEG) read with sharp without decoding pixels: the world size of a slide.
import { open, stat } from 'node:fs/promises';
import type { Metadata } from 'sharp';
import { loadSharp } from './sharp.js';
import { ImageError, UsageError } from '../report/errors.js';
import { fullPage, isTiffHead } from './tiff-header.js';
import { PNG_SIGNATURE } from './pixel-size.js';

export type ImageFormat = 'tiff' | 'png' | 'jpeg';
export const IMAGE_FORMATS: readonly ImageFormat[] = ['tiff', 'png', 'jpeg'];

export interface ImageSize {
  /** Pixels as stored (EXIF orientation is not applied: annotations use the stored pixel grid). */
  width: number;
  height: number;
  format: ImageFormat;
  /** Bands, alpha included. */
  channels: number;
  bitsPerSample?: number;
  /** The TIFF page read, where it is not the first (`fullPage`: the first is a smaller picture). */
  page?: number;
}

const BITS: Partial<Record<string, number>> = {
  uchar: 8, char: 8, ushort: 16, short: 16, uint: 32, int: 32, float: 32, double: 64, complex: 64, dpcomplex: 128,
};

/** A file's size and modification time, as a --resume identifies its inputs and --image (`SIZE:MTIME_MS`). */
export function statIdentity(st: { size: number; mtimeMs: number }): string {
  return `${st.size}:${st.mtimeMs}`;
}

/** `statIdentity` of the file at `path`; undefined when it has none to give. */
export async function fileIdentity(path: string): Promise<string | undefined> {
  const st = await stat(path).catch(() => undefined);
  return st && statIdentity(st);
}

/**
 * The size in the image's header. With --image-size (`given`) too, the world is `given` (undefined is returned), and
 * the image, a smaller picture of the slide maybe, is stretched over it: it must have the plane's shape, to a pixel,
 * or its background would lie askew under the features. An image whose header cannot be read goes by --image-size.
 */
export async function imageHeader(path: string, given: { width: number; height: number } | undefined): Promise<ImageSize | undefined> {
  if (given === undefined) return readImageSize(path);
  const size = await readImageSize(path).catch(() => undefined);
  if (size && Math.abs((size.width * given.height) / given.width - size.height) > 1) {
    throw new UsageError(`--image-size ${given.width},${given.height} has not the shape of --image ${path} (${size.width} × ${size.height} px): its background would be stretched askew over the plane; leave --image-size out, or give the size of the slide that image shows`);
  }
  return undefined;
}

/**
 * Width, height and sample layout of a TIFF (its largest page, the full-resolution level of a pyramidal slide), PNG or
 * JPEG, from the header alone.
 */
export async function readImageSize(path: string): Promise<ImageSize> {
  let meta: Metadata;
  let page = 0;
  try {
    // A slide is far above sharp's default pixel limit; reading the header decodes nothing anyway.
    const sharp = await loadSharp();
    meta = await sharp(path, { limitInputPixels: false }).metadata();
    page = meta.format === 'tiff' ? fullPage(path) : 0;
    if (page !== 0) meta = await sharp(path, { limitInputPixels: false, page }).metadata();
  } catch (err) {
    throw new ImageError(path, await describeSharpError(path, err));
  }
  const format = meta.format as string;
  if (!(IMAGE_FORMATS as readonly string[]).includes(format)) {
    throw new ImageError(path, `unsupported image format '${format}' (TIFF, PNG or JPEG expected)`);
  }
  if (!(meta.width > 0 && meta.height > 0)) {
    throw new ImageError(path, `the header gives no usable size (${meta.width} × ${meta.height})`);
  }
  const size: ImageSize = { width: meta.width, height: meta.height, format: format as ImageFormat, channels: meta.channels, ...(page !== 0 ? { page } : {}) };
  const bits = meta.bitsPerSample ?? BITS[meta.depth];
  if (bits !== undefined) size.bitsPerSample = bits;
  return size;
}

/**
 * A reason a person can act on for a failure of sharp on a file. sharp reports a missing file and a directory
 * alike, and its format message does not name the file, so the file system is asked first.
 */
export async function describeSharpError(path: string, err: unknown): Promise<string> {
  try {
    const s = await stat(path);
    if (s.isDirectory()) return 'is a directory, not an image';
    if (s.size === 0) return 'the file is empty';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'no such file';
    if (code === 'EACCES') return 'permission denied';
    return `cannot access the file (${code ?? String(e)})`;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/unsupported image format/i.test(message)) {
    // libvips says so of a TIFF or PNG it cannot decode, too (one cut short): the file's own signature says which.
    const kind = await signature(path);
    return kind ? `the file starts as a ${kind} but cannot be decoded (cut short or damaged?)` : 'not an image in a format sharp can read (TIFF, PNG or JPEG expected)';
  }
  // libtiff repeats its warnings line by line: each once, the first few.
  const lines = [...new Set(message.split('\n').map((l) => l.trim()).filter((l) => l !== ''))];
  return `cannot read the image: ${lines.slice(0, 3).join('; ')}${lines.length > 3 ? '; …' : ''}`;
}

/** The image format a file's first bytes name (TIFF or PNG), else undefined. */
async function signature(path: string): Promise<string | undefined> {
  let head: Buffer;
  try {
    const f = await open(path, 'r');
    try {
      head = Buffer.alloc(8);
      await f.read(head, 0, 8, 0);
    } finally {
      await f.close();
    }
  } catch {
    return undefined;
  }
  if (isTiffHead(head)) return 'TIFF';
  return head.subarray(0, 8).equals(PNG_SIGNATURE) ? 'PNG' : undefined;
}
