// Label masks (8, 16, 32-bit PNG/TIFF) decoded into a label raster; src/raster/ traces it into polygon features.
import { NATIVE_LE } from '../bytes.js';
import type { ChannelStats, DepthEnum, Metadata, OutputInfo, Sharp } from 'sharp';
import { loadSharp } from './sharp.js';
import { ImageError } from '../report/errors.js';
import type { LabelMask } from '../raster/trace.js';
import { describeSharpError } from './image.js';
import { fullPage, tiffFacts, type TiffFacts } from './tiff-header.js';
import { statedPixelSize, type PixelSize } from './pixel-size.js';
import { stripReader, type StripRows } from './tiff-strips.js';
import { sampleDepth } from './tiff-segments.js';
import { tileReader } from './tiff-tiles.js';
import { pngReader } from './png-rows.js';

/** A label mask opened for reading, whole or by bands of rows; what one pixel is, as its file states it. */
export interface MaskFile {
  width: number;
  height: number;
  /** Bytes a pixel takes as read: 1, 2, 4 or 8 (64-bit floats, turned into 32-bit labels). */
  bytesPerPixel: number;
  pixelSize?: PixelSize;
  /** A print default the file states instead of a size, for the build to say when no input gives one. */
  pixelSizeIgnored?: string;
  /** Rows [top, top + rows) of the labels, row-major, `width` a row. */
  rows(top: number, rows: number): Promise<LabelMask['data']>;
}

/** A mask's labels read whole, with its facts. */
export interface ReadMask extends LabelMask { pixelSize?: PixelSize; pixelSizeIgnored?: string }

/**
 * Opens a label mask (PNG or TIFF, one page: of several, the largest) and checks what its header says. Unsigned 8, 16 and
 * 32-bit samples keep their values exactly; signed 8 and 32-bit and floating-point samples are accepted when every
 * value is a non-negative integer that fits 32 bits (checked as rows are read); signed 16-bit samples when none is
 * negative (read through libvips' 16-bit grey path, which would clamp them to 0, background). Colour images are
 * refused: a colour or palette image does not carry label numbers sharp can recover. The pixel size comes from the
 * file's header (`statedPixelSize`). A strip TIFF is read from its strips (`stripReader`), a greyscale PNG from its
 * image data onwards (`pngReader`), the same values libvips gives; `direct` false reads them through libvips, for tests
 * that compare the two.
 */
export async function openLabelMask(path: string, direct = true): Promise<MaskFile> {
  // Whole-slide masks exceed sharp's default pixel limit by far; the caller chose the file.
  const sharp = await loadSharp();
  // An ICC profile is no colour to apply to labels: converted through it, labels 1…12 read as 5 of them.
  let page = 0;
  const open = () => sharp(path, { limitInputPixels: false, ignoreIcc: true, page });
  let meta: Metadata;
  try {
    meta = await open().metadata();
    // A TIFF whose first page is a smaller picture (a pyramid stored smallest first, an overview) holds the labels whole
    // in its largest.
    page = meta.format === 'tiff' ? fullPage(path) : 0;
    if (page !== 0) meta = await open().metadata();
  } catch (err) {
    // libvips reads no 64-bit TIFF samples and calls the header corrupt: int64 is what scikit-image labels in, and
    // what tifffile writes of them.
    if (tiffBits(path) === 64) return openWide(path);
    throw new ImageError(path, await describeSharpError(path, err));
  }
  if (meta.format !== 'png' && meta.format !== 'tiff') {
    throw new ImageError(path, `unsupported label mask format '${meta.format}' (PNG or TIFF expected; JPEG is lossy)`);
  }
  refuseUnfaithful(path, meta, page);
  const bands = meta.channels - (meta.hasAlpha ? 1 : 0);
  if (meta.isPalette) throw new ImageError(path, 'a label mask must be a greyscale image, this one is a palette image (its pixels pick colours, not labels): save the labels as grey values');
  if (bands !== 1) {
    throw new ImageError(path, `a label mask must be a single-channel greyscale image, this one has ${meta.channels} channels`);
  }
  if (meta.depth === 'short') await refuseNegative(path, meta, page, open());
  const plan = READ_PLAN[meta.depth];
  if (plan === undefined) throw new ImageError(path, `unsupported sample type '${meta.depth}' for labels`);
  const width = meta.width, height = meta.height;
  const { size, ignored } = statedPixelSize(path, meta.format, page);
  // A strip TIFF is read from the strips a band needs: libvips decodes it from the top down to the band's last row.
  // So it does a PNG, and a greyscale one is decoded on from where the last band ended.
  const own = !direct ? undefined : meta.format === 'tiff' ? await stripReader(path, page, meta.depth) : await pngReader(path, meta.depth);
  const rows = async (top: number, count: number): Promise<LabelMask['data']> => {
    if (own !== undefined) return plan.convert(await readDirect(path, own, top, count), width * count, width, path, top);
    let pipeline = open();
    if (top !== 0 || count !== height) pipeline = pipeline.extract({ left: 0, top, width, height: count });
    if (meta.hasAlpha) pipeline = pipeline.removeAlpha();
    // Without an explicit colourspace sharp converts to 8-bit sRGB on output and the labels are lost.
    pipeline = pipeline.toColourspace(plan.space).raw({ depth: plan.raw });
    let out: { data: Buffer; info: OutputInfo };
    try {
      out = await pipeline.toBuffer({ resolveWithObject: true });
    } catch (err) {
      throw new ImageError(path, await describeDecodeError(path, meta, page, err));
    }
    const n = width * count;
    if (out.info.channels !== 1 || out.data.byteLength !== n * plan.bytes) {
      throw new ImageError(path, `decoder returned ${out.info.channels} channels and ${out.data.byteLength} bytes for ${width} × ${count} pixels`);
    }
    // Typed views need an aligned offset; sharp's buffers are normally aligned, a copy covers the rare other case.
    const bytes = out.data.byteOffset % plan.bytes === 0 ? out.data : Buffer.from(out.data);
    return plan.convert(bytes, n, width, path, top);
  };
  return {
    width, height, bytesPerPixel: plan.bytes, rows,
    ...(size ? { pixelSize: size } : {}), ...(ignored !== undefined ? { pixelSizeIgnored: ignored } : {}),
  };
}

/**
 * A TIFF of 64-bit samples (int64, uint64, float64), read from its strips (`stripReader`) or its tiles (`tileReader`)
 * alone, its labels checked to fit 32 bits as its rows are read. One compressed otherwise than they decode is refused.
 */
async function openWide(path: string): Promise<MaskFile> {
  const page = fullPage(path);
  const facts = tiffFacts(path, page);
  const depth = sampleDepth(path, page);
  const plan = depth === undefined ? undefined : WIDE_PLAN[depth];
  const strips = plan === undefined || depth === undefined || facts?.samplesPerPixel !== 1 ? undefined
    : await stripReader(path, page, depth) ?? await tileReader(path, page, depth);
  if (facts === undefined || plan === undefined || strips === undefined) {
    throw new ImageError(path, 'this TIFF has 64-bit samples, which are read from TIFFs of one channel only (uncompressed, LZW, Deflate or PackBits): save the labels as 32 or 16-bit unsigned integers (numpy: labels.astype(np.uint32))');
  }
  refuseUnfaithfulTiff(path, facts);
  const { width, height } = facts;
  const { size, ignored } = statedPixelSize(path, 'tiff', page);
  return {
    width, height, bytesPerPixel: 8,
    rows: async (top, count) => plan(await readDirect(path, strips, top, count), width * count, width, path, top),
    ...(size ? { pixelSize: size } : {}), ...(ignored !== undefined ? { pixelSizeIgnored: ignored } : {}),
  };
}

/** Rows read by a reader of our own (a strip TIFF's strips, a PNG's image data); a failure of the file system named as sharp's are. */
async function readDirect(path: string, strips: StripRows, top: number, count: number): Promise<Buffer> {
  try {
    return await strips(top, count);
  } catch (err) {
    if (err instanceof ImageError) throw err;
    throw new ImageError(path, await describeSharpError(path, err));
  }
}

/** Reads a label mask whole (`openLabelMask`). */
export async function readLabelMask(path: string): Promise<ReadMask> {
  const m = await openLabelMask(path);
  const data = await m.rows(0, m.height);
  return { width: m.width, height: m.height, data, ...(m.pixelSize ? { pixelSize: m.pixelSize } : {}), ...(m.pixelSizeIgnored !== undefined ? { pixelSizeIgnored: m.pixelSizeIgnored } : {}) };
}

/**
 * Refuses signed 16-bit samples below zero: libvips' 16-bit grey path, the one way sharp gives them out, clamps them
 * to 0, and labels would turn into background without a word. Its statistics see the samples as stored.
 */
async function refuseNegative(path: string, meta: Metadata, page: number, image: Sharp): Promise<void> {
  let grey: ChannelStats | undefined;
  try {
    grey = (await image.stats()).channels[0];
  } catch (err) {
    throw new ImageError(path, await describeDecodeError(path, meta, page, err));
  }
  if (grey !== undefined && grey.min < 0) {
    throw new ImageError(path, `label value ${grey.min} at pixel (${grey.minX}, ${grey.minY}) is negative: labels are non-negative integers; save the labels as unsigned 16 or 32-bit integers`);
  }
}

/** The TIFF compressions libvips decodes as sharp ships it; it is built without ZSTD, LZMA, LERC, JPEG 2000. */
const DECODED = new Set(['no compression', 'LZW', 'Deflate', 'PackBits']);

/**
 * Why the pixels could not be decoded. A TIFF whose header read but whose compression is none the decoder has gets
 * that compression named (libvips says only 'ZSTD compression support is not configured; read error').
 */
async function describeDecodeError(path: string, meta: Metadata, page: number, err: unknown): Promise<string> {
  const compression = meta.format === 'tiff' ? tiffFacts(path, page)?.compression : undefined;
  if (compression !== undefined && !DECODED.has(compression)) {
    return `this TIFF is compressed with ${compression}, which is not decoded here: write the mask with no, LZW, Deflate or PackBits compression (tiffcp -c zip IN.tif OUT.tif; tifffile: compression='zlib')`;
  }
  return describeSharpError(path, err);
}

/** The bits per sample a TIFF's header gives, undefined for another file or one that cannot be read. */
function tiffBits(path: string): number | undefined {
  try {
    return tiffFacts(path)?.bitsPerSample;
  } catch {
    return undefined;
  }
}

/**
 * Refuses what the decoder would turn into other labels without a word: a lossy TIFF (its artefacts are labels of
 * their own: a mask of 5 labels read as 17), samples below 8 bits (scaled to 0–255), a WhiteIsZero TIFF (inverted),
 * a second sample that is not alpha (dropped as one), and pages of the first one's size (a z-stack: one plane read).
 */
function refuseUnfaithful(path: string, meta: Metadata, page: number): void {
  const facts = meta.format === 'tiff' ? tiffFacts(path, page) : undefined;
  const bits = facts?.bitsPerSample ?? meta.bitsPerSample;
  if (bits !== undefined && bits < 8 && !meta.isPalette) throw new ImageError(path, `a label mask needs 8, 16 or 32-bit samples, this one has ${bits}-bit samples (a binary image holds no label numbers)`);
  if (facts) refuseUnfaithfulTiff(path, facts);
}

/** What `refuseUnfaithful` refuses that a TIFF's header says. */
function refuseUnfaithfulTiff(path: string, facts: TiffFacts): void {
  const refuse = (why: string) => { throw new ImageError(path, why); };
  if (facts.lossy) refuse(`a label mask must be stored losslessly, this TIFF is compressed with ${facts.lossy}: write it with no, LZW or Deflate compression`);
  if (facts.photometric === 0) refuse('this TIFF stores grey as WhiteIsZero (inverted: labels would read as their complement): write it BlackIsZero (MinIsBlack)');
  if (facts.samplesPerPixel === 2 && facts.extraSamples[0] === 0) refuse('this TIFF has 2 samples per pixel and the second is not alpha (ExtraSamples 0): a label mask is one channel; write each channel as a mask of its own');
  if (facts.samePages > 1) {
    refuse(`this TIFF holds ${facts.samePages} pages of ${facts.width} × ${facts.height} px (a z-stack, a time series or channels), and a label mask is one plane: write each page as a mask of its own and give them as planes (--input z=0:FILE …)`);
  }
}

interface ReadPlan {
  space: 'b-w' | 'grey16';
  raw: keyof DepthEnum;
  bytes: number;
  /** `top`: the first row's number in the mask, for where a value is said to be. */
  convert(b: Buffer, n: number, width: number, path: string, top: number): Uint8Array | Uint16Array | Uint32Array;
}

/** Converts a band of 64-bit samples to labels, checking they fit 32 bits. */
type WidePlan = (b: Buffer, n: number, width: number, path: string, top: number) => Uint32Array;

/** 64-bit integers fit when their high words are all 0 (a negative int64's is not); their low words are the labels. */
function fromWideIntegers(signed: boolean): WidePlan {
  return (b, n, width, path, top) => {
    const words = new Uint32Array(b.buffer, b.byteOffset, 2 * n);
    const high = NATIVE_LE ? 1 : 0;
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      if (words[2 * i + high] !== 0) {
        const v = signed ? new BigInt64Array(b.buffer, b.byteOffset, n)[i] : new BigUint64Array(b.buffer, b.byteOffset, n)[i];
        throw new ImageError(path, `label value ${v} at pixel (${i % width}, ${top + Math.floor(i / width)}) is not a non-negative integer below 2^32`);
      }
      out[i] = words[2 * i + 1 - high];
    }
    return out;
  };
}

const WIDE_PLAN: Partial<Record<string, WidePlan>> = {
  uint64: fromWideIntegers(false),
  int64: fromWideIntegers(true),
  double: fromDoubles,
};

/** 64-bit floats, each a label when it is a non-negative integer below 2^32. */
function fromDoubles(b: Buffer, n: number, width: number, path: string, top: number): Uint32Array {
  const f = new Float64Array(b.buffer, b.byteOffset, n);
  checkNonNegativeIntegers(f, width, path, top);
  return Uint32Array.from(f);
}

function checkNonNegativeIntegers(values: ArrayLike<number>, width: number, path: string, top: number): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!(v >= 0 && v <= 0xffffffff && Math.floor(v) === v)) {
      throw new ImageError(path, `label value ${v} at pixel (${i % width}, ${top + Math.floor(i / width)}) is not a non-negative integer below 2^32`);
    }
  }
}

const READ_PLAN: Partial<Record<string, ReadPlan>> = {
  uchar: { space: 'b-w', raw: 'uchar', bytes: 1, convert: (b, n) => new Uint8Array(b.buffer, b.byteOffset, n) },
  char: {
    space: 'b-w', raw: 'char', bytes: 1,
    convert: (b, n, width, path, top) => { checkNonNegativeIntegers(new Int8Array(b.buffer, b.byteOffset, n), width, path, top); return new Uint8Array(b.buffer, b.byteOffset, n); },
  },
  ushort: { space: 'grey16', raw: 'ushort', bytes: 2, convert: (b, n) => new Uint16Array(b.buffer, b.byteOffset, n) },
  short: { space: 'grey16', raw: 'ushort', bytes: 2, convert: (b, n) => new Uint16Array(b.buffer, b.byteOffset, n) },
  uint: { space: 'b-w', raw: 'uint', bytes: 4, convert: (b, n) => new Uint32Array(b.buffer, b.byteOffset, n) },
  int: {
    space: 'b-w', raw: 'int', bytes: 4,
    convert: (b, n, width, path, top) => { checkNonNegativeIntegers(new Int32Array(b.buffer, b.byteOffset, n), width, path, top); return new Uint32Array(b.buffer, b.byteOffset, n); },
  },
  float: {
    space: 'b-w', raw: 'float', bytes: 4,
    convert: (b, n, width, path, top) => { const f = new Float32Array(b.buffer, b.byteOffset, n); checkNonNegativeIntegers(f, width, path, top); return Uint32Array.from(f); },
  },
  double: { space: 'b-w', raw: 'double', bytes: 8, convert: fromDoubles },
};
