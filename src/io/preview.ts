// PNG quicklook of a plane and the downsampled slide image: features painted by raster/paint.ts, composed and encoded by sharp.
import { rename, rm, writeFile } from 'node:fs/promises';
import type { Metadata, Sharp, SharpOptions } from 'sharp';
import { loadSharp } from './sharp.js';
import type { Feature } from '../model/feature.js';
import { flatten, headOf } from '../tiling/flat.js';
import { ImageError } from '../report/errors.js';
import { describeSharpError } from './image.js';
import { fullPage } from './tiff-header.js';
import { PreviewPainter, overBackground, paintFeature, previewPixel, type Rgb } from '../raster/paint.js';

export const PREVIEW_MAX_SIDE = 2048;
const BACKGROUND: Rgb = { r: 17, g: 19, b: 24 };

/**
 * The preview grid of a plane: its size in preview pixels, the plane pixels per preview pixel (a power of two), and
 * the plane's own size (the grid covers it, up to a pixel more).
 */
export interface PreviewGrid { width: number; height: number; pixel: number; plane: { width: number; height: number } }

/**
 * The grid of a width × height plane: the smallest power-of-two pixel that brings the longest side to `maxSide` or
 * less, but at most `maxPixel` (a build keeps it within a work unit's cell, so each unit paints whole pixels).
 */
export function previewGrid(width: number, height: number, maxSide = PREVIEW_MAX_SIDE, maxPixel = Infinity): PreviewGrid {
  if (!(width > 0 && height > 0 && Number.isFinite(width) && Number.isFinite(height))) {
    throw new RangeError(`preview plane size ${width} × ${height} must be positive`);
  }
  const pixel = Math.min(previewPixel(width, height, maxSide), Math.max(1, maxPixel));
  return { width: Math.ceil(width / pixel), height: Math.ceil(height / pixel), pixel, plane: { width, height } };
}

export interface PreviewOptions {
  /** Plane size in pixels: the coordinate space of the features. */
  width: number;
  height: number;
  /** Every feature is painted, in this order, at its full form; memory holds the picture, never the features. */
  features: Iterable<Feature> | AsyncIterable<Feature>;
  /** A TIFF, PNG or JPEG stretched over the plane as background; without it, a dark background. */
  image?: string;
  /** Longest side of the preview in pixels (default 2048); a smaller plane is drawn at its own size. */
  maxSide?: number;
  /** Preview pixels a point's disc reaches beyond the point's own pixel (default 2). */
  pointRadius?: number;
}

export interface PreviewFileOptions extends PreviewOptions {
  outPath: string;
}

export interface PreviewInfo {
  /** Preview size in pixels. */
  width: number;
  height: number;
  /** Preview pixels per plane pixel (1 / a power of two). */
  scale: number;
  /** Features painted (those with a geometry), and features seen. */
  drawn: number;
  total: number;
}

/** Renders the preview and writes it to `outPath` (through a temporary name, so a reader never sees half a file). */
export async function renderPreview(options: PreviewFileOptions): Promise<PreviewInfo & { path: string }> {
  const { png, ...info } = await renderPreviewPng(options);
  const partial = `${options.outPath}.partial`;
  try {
    await writeFile(partial, png);
    await rename(partial, options.outPath);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  return { ...info, path: options.outPath };
}

/** The preview as PNG bytes; the same options give the same bytes (sharp writes no timestamp). */
export async function renderPreviewPng(options: PreviewOptions): Promise<PreviewInfo & { png: Buffer }> {
  const grid = previewGrid(options.width, options.height, options.maxSide);
  const painter = new PreviewPainter({ x: 0, y: 0, width: grid.width, height: grid.height, pixel: grid.pixel }, options.pointRadius);
  let total = 0, drawn = 0;
  for await (const feature of options.features) {
    total++;
    const geom = feature.geometry === null || feature.geometry === undefined ? null : flatten(feature.geometry);
    if (geom === null) continue;
    paintFeature(painter, { seq: total, layer: 0, geom, head: headOf(feature) });
    drawn++;
  }
  const png = await composePreview(painter.rgba, grid, options.image === undefined ? undefined : await imageBackground(options.image, grid));
  return { png, width: grid.width, height: grid.height, scale: 1 / grid.pixel, drawn, total };
}

/** The PNG of a painted canvas (premultiplied RGBA over the whole grid) over the image, or over a dark background. */
export async function composePreview(canvas: Uint8Array, grid: PreviewGrid, pixels?: Uint8Array): Promise<Buffer> {
  let background: Uint8Array | Rgb = BACKGROUND;
  if (pixels !== undefined) {
    // The image covers the plane, which the grid may exceed by part of a pixel: the rest stays dark.
    const size = imageSize(grid);
    const rgb = new Uint8Array(grid.width * grid.height * 3);
    for (let p = 0; p < grid.width * grid.height; p++) rgb.set([BACKGROUND.r, BACKGROUND.g, BACKGROUND.b], p * 3);
    for (let j = 0; j < size.height; j++) rgb.set(pixels.subarray(j * size.width * 3, (j + 1) * size.width * 3), j * grid.width * 3);
    background = rgb;
  }
  const rgb = overBackground(canvas, grid.width * grid.height, background);
  const sharp = await loadSharp();
  return sharp(rgb, { raw: { width: grid.width, height: grid.height, channels: 3 } })
    .png({ compressionLevel: 9, adaptiveFiltering: false })
    .toBuffer();
}

/** Preview pixels the plane itself takes (rounded), at least one each way. */
function imageSize(grid: PreviewGrid): { width: number; height: number } {
  return {
    width: Math.min(grid.width, Math.max(1, Math.round(grid.plane.width / grid.pixel))),
    height: Math.min(grid.height, Math.max(1, Math.round(grid.plane.height / grid.pixel))),
  };
}

/**
 * The image over the plane, downsampled to the grid's pixel, as JPEG: what a viewer shows behind the vectors (asset
 * role `background`, placed over the plane's bbox).
 */
export async function backgroundJpeg(rgb: Uint8Array, grid: PreviewGrid): Promise<{ jpeg: Buffer; width: number; height: number }> {
  const size = imageSize(grid);
  const sharp = await loadSharp();
  const jpeg = await sharp(rgb, { raw: { width: size.width, height: size.height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
  return { jpeg, ...size };
}

/** The image over the plane on the grid (what `composePreview` and `backgroundJpeg` take), as 8-bit RGB. */
export async function imageBackground(image: string, grid: PreviewGrid): Promise<Uint8Array> {
  const size = imageSize(grid);
  return imagePixels(image, size.width, size.height);
}

/** The image fitted to width × height as 8-bit RGB. Greyscale and 16-bit microscopy is usually dim, so non-8-bit images are stretched. */
async function imagePixels(path: string, width: number, height: number): Promise<Uint8Array> {
  const sharp = await loadSharp();
  try {
    const input = await pickLevel(path, width, height);
    const meta = await sharp(path, input).metadata();
    let img: Sharp = sharp(path, input).resize(width, height, { fit: 'fill' });
    if (meta.depth !== 'uchar') img = img.normalise();
    const { data, info } = await img.flatten({ background: BACKGROUND }).toColourspace('srgb').removeAlpha().raw().toBuffer({ resolveWithObject: true });
    if (info.channels === 3) return data;
    // One band (sharp keeps greyscale as one channel): spread it over three.
    const rgb = new Uint8Array(width * height * 3);
    for (let p = 0; p < width * height; p++) rgb.fill(data[p * info.channels], p * 3, p * 3 + 3);
    return rgb;
  } catch (err) {
    if (err instanceof ImageError) throw err;
    throw new ImageError(path, await describeSharpError(path, err));
  }
}

/**
 * For a pyramidal TIFF, the smallest level still at least as large as the preview, so a whole slide is not decoded
 * at full resolution for a 2048-pixel picture. Levels are pages (SVS and similar) or sub-IFDs (OME-TIFF); a level
 * counts only with the same aspect ratio as the full image (labels and macro images are pages too), which is the
 * largest page (`fullPage`), not always the first.
 */
async function pickLevel(path: string, pw: number, ph: number): Promise<SharpOptions> {
  let base: SharpOptions = { limitInputPixels: false };
  const sharp = await loadSharp();
  let meta: Metadata = await sharp(path, base).metadata();
  if (meta.format !== 'tiff') return base;
  const full = fullPage(path);
  if (full !== 0) {
    base = { ...base, page: full };
    meta = await sharp(path, base).metadata();
  }
  const candidates: SharpOptions[] = [];
  for (let page = 0; page < Math.min(meta.pages ?? 1, 16); page++) if (page !== full) candidates.push({ ...base, page });
  for (let subifd = 0; subifd < Math.min(meta.subifds ?? 0, 16); subifd++) candidates.push({ ...base, subifd });
  let best = base, bestPixels = meta.width * meta.height;
  for (const c of candidates) {
    const m = await sharp(path, c).metadata();
    const sameShape = Math.abs(m.width / m.height - meta.width / meta.height) < 0.01 * (meta.width / meta.height);
    if (sameShape && m.width >= pw && m.height >= ph && m.width * m.height < bestPixels) { best = c; bestPixels = m.width * m.height; }
  }
  return best;
}
