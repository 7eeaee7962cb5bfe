// Label masks (8, 16, 32-bit PNG/TIFF) decoded into a label raster; src/raster/ traces it into polygon features.
import type { DepthEnum, Metadata, OutputInfo } from 'sharp';
import { loadSharp } from './sharp.js';
import { ImageError } from '../report/errors.js';
import type { LabelMask } from '../raster/trace.js';
import { describeSharpError } from './image.js';
import { lossyTiffCompression } from './tiff-compression.js';

/**
 * Reads a label mask from a PNG or TIFF file (the first page of a TIFF). Unsigned 8, 16 and 32-bit samples keep
 * their values exactly; signed 8 and 32-bit and floating-point samples are accepted when every value is a
 * non-negative integer that fits 32 bits. Signed 16-bit samples are read through libvips' 16-bit grey path, which
 * clamps negative values to 0 (background). Colour images are refused: a colour or palette image does not carry
 * label numbers sharp can recover.
 */
export async function readLabelMask(path: string): Promise<LabelMask> {
  // Whole-slide masks exceed sharp's default pixel limit by far; the caller chose the file.
  const sharp = await loadSharp();
  const open = () => sharp(path, { limitInputPixels: false });
  let meta: Metadata;
  try {
    meta = await open().metadata();
  } catch (err) {
    throw new ImageError(path, await describeSharpError(path, err));
  }
  if (meta.format !== 'png' && meta.format !== 'tiff') {
    throw new ImageError(path, `unsupported label mask format '${meta.format}' (PNG or TIFF expected; JPEG is lossy)`);
  }
  const lossy = meta.format === 'tiff' ? lossyTiffCompression(path) : undefined;
  // Compression artefacts are labels of their own: a mask of 5 labels read as 17.
  if (lossy) throw new ImageError(path, `a label mask must be stored losslessly, this TIFF is compressed with ${lossy}: write it with no, LZW or Deflate compression`);
  const bands = meta.channels - (meta.hasAlpha ? 1 : 0);
  if (bands !== 1 || meta.isPalette) {
    throw new ImageError(path, `a label mask must be a single-channel greyscale image, this one has ${meta.channels} channels${meta.isPalette ? ' (palette)' : ''}`);
  }
  let pipeline = open();
  if (meta.hasAlpha) pipeline = pipeline.removeAlpha();
  const plan = READ_PLAN[meta.depth];
  if (plan === undefined) throw new ImageError(path, `unsupported sample type '${meta.depth}' for labels`);
  // Without an explicit colourspace sharp converts to 8-bit sRGB on output and the labels are lost.
  pipeline = pipeline.toColourspace(plan.space).raw({ depth: plan.raw });
  let out: { data: Buffer; info: OutputInfo };
  try {
    out = await pipeline.toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw new ImageError(path, await describeSharpError(path, err));
  }
  const { width, height, channels } = out.info;
  const n = width * height;
  if (channels !== 1 || out.data.byteLength !== n * plan.bytes) {
    throw new ImageError(path, `decoder returned ${channels} channels and ${out.data.byteLength} bytes for ${width} × ${height} pixels`);
  }
  // Typed views need an aligned offset; sharp's buffers are normally aligned, a copy covers the rare other case.
  const bytes = out.data.byteOffset % plan.bytes === 0 ? out.data : Buffer.from(out.data);
  const data = plan.convert(bytes, n, path);
  return { width, height, data };
}

interface ReadPlan {
  space: 'b-w' | 'grey16';
  raw: keyof DepthEnum;
  bytes: number;
  convert(b: Buffer, n: number, path: string): Uint8Array | Uint16Array | Uint32Array;
}

function checkNonNegativeIntegers(values: ArrayLike<number>, path: string): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!(v >= 0 && v <= 0xffffffff && Math.floor(v) === v)) {
      throw new ImageError(path, `label value ${v} at pixel ${i} is not a non-negative integer below 2^32`);
    }
  }
}

const READ_PLAN: Partial<Record<string, ReadPlan>> = {
  uchar: { space: 'b-w', raw: 'uchar', bytes: 1, convert: (b, n) => new Uint8Array(b.buffer, b.byteOffset, n) },
  char: {
    space: 'b-w', raw: 'char', bytes: 1,
    convert: (b, n, path) => { checkNonNegativeIntegers(new Int8Array(b.buffer, b.byteOffset, n), path); return new Uint8Array(b.buffer, b.byteOffset, n); },
  },
  ushort: { space: 'grey16', raw: 'ushort', bytes: 2, convert: (b, n) => new Uint16Array(b.buffer, b.byteOffset, n) },
  short: { space: 'grey16', raw: 'ushort', bytes: 2, convert: (b, n) => new Uint16Array(b.buffer, b.byteOffset, n) },
  uint: { space: 'b-w', raw: 'uint', bytes: 4, convert: (b, n) => new Uint32Array(b.buffer, b.byteOffset, n) },
  int: {
    space: 'b-w', raw: 'int', bytes: 4,
    convert: (b, n, path) => { checkNonNegativeIntegers(new Int32Array(b.buffer, b.byteOffset, n), path); return new Uint32Array(b.buffer, b.byteOffset, n); },
  },
  float: {
    space: 'b-w', raw: 'float', bytes: 4,
    convert: (b, n, path) => { const f = new Float32Array(b.buffer, b.byteOffset, n); checkNonNegativeIntegers(f, path); return Uint32Array.from(f); },
  },
  double: {
    space: 'b-w', raw: 'double', bytes: 8,
    convert: (b, n, path) => { const f = new Float64Array(b.buffer, b.byteOffset, n); checkNonNegativeIntegers(f, path); return Uint32Array.from(f); },
  },
};
