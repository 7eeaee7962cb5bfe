// PNG quicklook of one plane: features drawn as an SVG overlay, composed by sharp over the downscaled image or a dark background.
import { rename, rm, writeFile } from 'node:fs/promises';
import sharp, { type Metadata, type Sharp, type SharpOptions } from 'sharp';
import type { Feature } from '../model/feature.js';
import type { Geometry, Position } from '../model/geometry.js';
import { ImageError } from '../report/errors.js';
import { describeSharpError } from './image.js';
import { mulberry32 } from '../random.js';

export interface PreviewOptions {
  /** Plane size in pixels: the coordinate space of the features. */
  width: number;
  height: number;
  /** Drawn in input order; at most `maxFeatures` of them, chosen deterministically (see `renderPreviewPng`). */
  features: Iterable<Feature> | AsyncIterable<Feature>;
  /** A TIFF, PNG or JPEG stretched over the plane as background; without it, a dark background. */
  image?: string;
  /** Longest side of the preview in pixels (default 2048); a smaller plane is drawn at its own size. */
  maxSide?: number;
  /** Default 20,000: beyond that a preview is a blur of outlines and SVG rendering time grows. */
  maxFeatures?: number;
}

export interface PreviewFileOptions extends PreviewOptions {
  outPath: string;
}

export interface PreviewInfo {
  /** Preview size in pixels. */
  width: number;
  height: number;
  /** Preview pixels per plane pixel. */
  scale: number;
  /** Features drawn, and features seen (with or without geometry). */
  drawn: number;
  total: number;
}

export const PREVIEW_MAX_SIDE = 2048;
export const PREVIEW_MAX_FEATURES = 20_000;
const BACKGROUND = { r: 17, g: 19, b: 24 };
const UNCLASSIFIED = '#36d6e7';

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

/**
 * The preview as PNG bytes. The same options give the same bytes: sharp writes no timestamp, and when there are more
 * than `maxFeatures` features the ones drawn are a reservoir sample driven by a fixed-seed generator, so the choice
 * depends only on the input order, and the sample is spread over the whole input rather than its first part.
 */
export async function renderPreviewPng(options: PreviewOptions): Promise<PreviewInfo & { png: Buffer }> {
  const { width, height } = options;
  if (!(width > 0 && height > 0 && Number.isFinite(width) && Number.isFinite(height))) {
    throw new RangeError(`preview plane size ${width} × ${height} must be positive`);
  }
  const maxSide = options.maxSide ?? PREVIEW_MAX_SIDE;
  const maxFeatures = options.maxFeatures ?? PREVIEW_MAX_FEATURES;
  const scale = Math.min(1, maxSide / Math.max(width, height));
  const pw = Math.max(1, Math.round(width * scale));
  const ph = Math.max(1, Math.round(height * scale));
  const sx = pw / width, sy = ph / height;

  const random = mulberry32(0x5eed);
  const sample: Array<{ index: number; svg: string }> = [];
  let total = 0, drawable = 0;
  for await (const feature of options.features) {
    const index = total++;
    if (feature.geometry === null || feature.geometry === undefined) continue;
    // Reservoir sampling (algorithm R): every drawable feature has the same chance to be drawn. SVG is made only
    // for features that get a slot.
    let slot = sample.length;
    if (slot >= maxFeatures) {
      slot = Math.floor(random() * (drawable + 1));
      if (slot >= maxFeatures) { drawable++; continue; }
    }
    const svg = featureSvg(feature.geometry, colourOf(feature.featureClass), sx, sy);
    if (svg === '') continue;
    drawable++;
    sample[slot] = { index, svg };
  }
  sample.sort((a, b) => a.index - b.index);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${pw}" height="${ph}" viewBox="0 0 ${pw} ${ph}">`
    + sample.map((s) => s.svg).join('') + '</svg>';

  const base = options.image === undefined
    ? sharp({ create: { width: pw, height: ph, channels: 3, background: BACKGROUND } })
    : await imageBackground(options.image, pw, ph);
  // Compositing may leave an alpha band depending on the base; a second step fixes the output to opaque RGB.
  const composed = await base
    .composite([{ input: Buffer.from(svg), top: 0, left: 0 }])
    .raw()
    .toBuffer({ resolveWithObject: true });
  const png = await sharp(composed.data, { raw: { width: composed.info.width, height: composed.info.height, channels: composed.info.channels } })
    .removeAlpha()
    .png({ compressionLevel: 9, adaptiveFiltering: false })
    .toBuffer();
  return { png, width: pw, height: ph, scale, drawn: sample.length, total };
}

/** The image fitted to the preview. Greyscale and 16-bit microscopy is usually dim, so non-8-bit images are stretched. */
async function imageBackground(path: string, pw: number, ph: number): Promise<Sharp> {
  try {
    const input = await pickLevel(path, pw, ph);
    const meta = await sharp(path, input).metadata();
    let img = sharp(path, input).resize(pw, ph, { fit: 'fill' });
    if (meta.depth !== 'uchar') img = img.normalise();
    // Render once to a fixed 8-bit RGB buffer so compositing sees one layout whatever the source was.
    const { data, info } = await img.flatten({ background: BACKGROUND }).toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
  } catch (err) {
    if (err instanceof ImageError) throw err;
    throw new ImageError(path, await describeSharpError(path, err));
  }
}

/**
 * For a pyramidal TIFF, the smallest level still at least as large as the preview, so a whole slide is not decoded
 * at full resolution for a 2048-pixel picture. Levels are pages (SVS and similar) or sub-IFDs (OME-TIFF); a level
 * counts only with the same aspect ratio as the full image (labels and macro images are pages too).
 */
async function pickLevel(path: string, pw: number, ph: number): Promise<SharpOptions> {
  const base: SharpOptions = { limitInputPixels: false };
  const meta: Metadata = await sharp(path, base).metadata();
  if (meta.format !== 'tiff') return base;
  const candidates: SharpOptions[] = [];
  for (let page = 1; page < Math.min(meta.pages ?? 1, 16); page++) candidates.push({ ...base, page });
  for (let subifd = 0; subifd < Math.min(meta.subifds ?? 0, 16); subifd++) candidates.push({ ...base, subifd });
  let best = base, bestPixels = meta.width * meta.height;
  for (const c of candidates) {
    const m = await sharp(path, c).metadata();
    const sameShape = Math.abs(m.width / m.height - meta.width / meta.height) < 0.01 * (meta.width / meta.height);
    if (sameShape && m.width >= pw && m.height >= ph && m.width * m.height < bestPixels) { best = c; bestPixels = m.width * m.height; }
  }
  return best;
}

/** A class keeps its colour across previews and builds: the hue comes from a hash of its name. */
function colourOf(featureClass: string | undefined): string {
  if (featureClass === undefined) return UNCLASSIFIED;
  let h = 0x811c9dc5;
  for (let i = 0; i < featureClass.length; i++) h = Math.imul(h ^ featureClass.charCodeAt(i), 0x01000193);
  return hslHex((h >>> 0) % 360, 0.75, 0.58);
}

function hslHex(hue: number, s: number, l: number): string {
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + hue / 30) % 12;
    const v = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(v * 255).toString(16).padStart(2, '0');
  };
  return `#${f(0)}${f(8)}${f(4)}`;
}


/** Two decimals are below what anyone sees and keep the SVG, and so the bytes, independent of float noise. */
function num(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/** Path data for rings or lines in preview pixels; points that round to the same spot are dropped. */
function pathData(parts: Position[][], sx: number, sy: number, close: boolean): { d: string; dots: string[] } {
  let d = '';
  const dots: string[] = [];
  for (const part of parts) {
    const pts: string[] = [];
    let last = '';
    for (const p of part) {
      const s = `${num(p[0] * sx)} ${num(p[1] * sy)}`;
      if (s !== last) pts.push(s);
      last = s;
    }
    if (close && pts.length > 1 && pts[0] === pts[pts.length - 1]) pts.pop();
    // A shape smaller than a preview pixel still shows, as a dot, so sparse small objects are not lost.
    if (pts.length < (close ? 3 : 2)) { if (pts.length > 0) dots.push(pts[0]); continue; }
    d += `M${pts[0]}L${pts.slice(1).join(' ')}${close ? 'Z' : ''}`;
  }
  return { d, dots };
}

function dotsSvg(points: string[], colour: string, r: number): string {
  if (points.length === 0) return '';
  const d = points.map((p) => {
    const [x, y] = p.split(' ').map(Number);
    return `M${num(x - r)} ${num(y)}a${r} ${r} 0 1 0 ${2 * r} 0a${r} ${r} 0 1 0 ${-2 * r} 0Z`;
  }).join('');
  return `<path d="${d}" fill="${colour}"/>`;
}

function featureSvg(g: Geometry, colour: string, sx: number, sy: number): string {
  const area = (rings: Position[][]) => {
    const { d, dots } = pathData(rings, sx, sy, true);
    return (d === '' ? '' : `<path d="${d}" fill="${colour}" fill-opacity="0.35" fill-rule="evenodd" stroke="${colour}" stroke-opacity="0.95" stroke-width="1"/>`)
      + dotsSvg(dots, colour, 1);
  };
  const line = (lines: Position[][]) => {
    const { d, dots } = pathData(lines, sx, sy, false);
    return (d === '' ? '' : `<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.5"/>`) + dotsSvg(dots, colour, 1);
  };
  const points = (ps: Position[]) => dotsSvg(ps.map((p) => `${num(p[0] * sx)} ${num(p[1] * sy)}`), colour, 2.5);
  switch (g.type) {
    case 'Point': return points([g.coordinates]);
    case 'MultiPoint': return points(g.coordinates);
    case 'LineString': return line([g.coordinates]);
    case 'MultiLineString': return line(g.coordinates);
    case 'Polygon': return area(g.coordinates);
    case 'MultiPolygon': return area(g.coordinates.flat());
    // A mesh seen from above: the outlines of its faces.
    case 'PolyhedralSurface': case 'TIN': return g.coordinates === undefined ? '' : line(g.coordinates.flat());
    case 'GeometryCollection': return g.geometries.map((m) => featureSvg(m, colour, sx, sy)).join('');
  }
}
