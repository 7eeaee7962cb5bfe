// The physical size of an image's pixel where its file states it (a label mask's, or the slide's given as --image):
// OME-XML, an Aperio description's MPP, ImageJ's calibration, a TIFF's resolution in centimetres, a PNG's pHYs in
// metres; what a file states that is no size (a print default), for the build to say; and the multiscale that says it.
import fs from 'node:fs';
import { AXIS_UNITS, type AxisUnit, type Multiscale, type PixelSize } from '../model/multiscale.js';
import { tiffTags, type TagValue } from './tiff-header.js';

export type { PixelSize } from '../model/multiscale.js';

/**
 * The pixel size a file states (`size`), or else what it states that is no size and was not taken (`ignored`: "72 dpi,
 * a print default"), for the build to say when nothing else gives the pyramid a size; neither when it states nothing.
 */
export interface StatedPixelSize { size?: PixelSize; ignored?: string }

/**
 * Dots per inch that image editors and libraries write when nobody gave a size (screen and print resolutions), which
 * a PNG (whose only unit is the metre) or a TIFF in centimetres carries as well: none is a microscope's pixel.
 */
const PRINT_DPI = [72, 75, 96, 100, 120, 144, 150, 200, 240, 300, 400, 600, 720, 1200, 2400];

/** libvips' density when nobody set one: sharp writes it into every PNG's pHYs, libvips into every TIFF. */
const LIBVIPS_PER_MM = 1;

/**
 * What a density (pixels per millimetre) that is a default rather than a size says of itself, for the one line that
 * says no size was taken: libvips' 1 px/mm, or a round screen or print dpi; undefined for a density that is a size. A
 * pHYs holds whole pixels per metre, so such a dpi comes back within 0.0127 of itself.
 */
function defaultDensity(perMm: number): string | undefined {
  if (Math.abs(perMm - LIBVIPS_PER_MM) < 1e-6) return '1 pixel per millimetre (25.4 dpi), libvips\' default when no size is given';
  const dpi = perMm * 25.4;
  const print = PRINT_DPI.find((d) => Math.abs(dpi - d) < 0.02);
  return print === undefined ? undefined : `${print} dpi, a print default`;
}

/**
 * What a resolution in inches says, which is never taken: inch is TIFF's default unit, and writers fill it with 72 or
 * 300 dpi (sharp with 25.4) whatever the pixels show; a real size comes in another unit.
 */
function inchDensity(dpi: number): string {
  return defaultDensity(dpi / 25.4) ?? `${Number(dpi.toPrecision(6))} dpi, in inches: TIFF's default unit, in which writers put print sizes`;
}

/**
 * `units / perUnit`, to 6 significant digits: a resolution is the size's inverse rounded (to whole pixels per metre
 * in a pHYs, to a ratio of integers in a TIFF, ImageJ's to millionths), and its inverse is the size given plus noise
 * in the 7th digit (0.325 µm comes back as 0.32500003).
 */
function inverse(units: number, perUnit: number): number {
  return Number((units / perUnit).toPrecision(6));
}

/**
 * What the file states of its pixel's size: the size, or what it states that is none (a default: see
 * `defaultDensity`). sharp's metadata is not enough: it gives a TIFF's or PNG's horizontal density alone, as dots per
 * inch, calls a PNG's metres inches, and gives neither the ImageDescription (OME-XML, Aperio, ImageJ) nor a TIFF
 * resolution without a unit; so the headers are read here. A JPEG's density is not read: JFIF and EXIF carry a print
 * dpi (sharp reads 72 from a JPEG that states none), never a microscope's pixel.
 */
export function statedPixelSize(path: string, format: 'tiff' | 'png' | 'jpeg', page = 0): StatedPixelSize {
  return format === 'tiff' ? tiffPixelSize(path, page) : format === 'png' ? pngPixelSize(path) : {};
}

/** Axes x and y of the pixel's units and a scale to them: what a GeoJSON input's `multiscale` member says. */
export function pixelSizeMultiscale(size: PixelSize): Multiscale {
  return {
    axes: [{ name: 'x', type: 'space', unit: size.unitX }, { name: 'y', type: 'space', unit: size.unitY }],
    coordinateTransformations: [{ type: 'scale', scale: [size.x, size.y] }],
  };
}

/** A pixel size as a person reads it: `0.25 × 0.5 micrometer`, or `4 nanometer × 0.5 micrometer`. */
export function pixelSizeText(p: PixelSize): string {
  return p.unitX === p.unitY ? `${p.x} × ${p.y} ${p.unitX}` : `${p.x} ${p.unitX} × ${p.y} ${p.unitY}`;
}

/** The eight bytes every PNG file opens with. */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** pHYs unit 1: pixels per metre (0 gives the pixels' aspect ratio only). */
const METRE = 1;

/** A PNG's pHYs in metres, which comes before the image data; the chunks before it are stepped over, not read. */
function pngPixelSize(path: string): StatedPixelSize {
  const fd = fs.openSync(path, 'r');
  try {
    const head = Buffer.alloc(8);
    if (fs.readSync(fd, head, 0, 8, 0) < 8 || !head.equals(PNG_SIGNATURE)) return {};
    const chunk = Buffer.alloc(8 + 9);
    for (let at = 8; ;) {
      const got = fs.readSync(fd, chunk, 0, chunk.length, at);
      if (got < 8) return {};
      const length = chunk.readUInt32BE(0), type = chunk.toString('latin1', 4, 8);
      if (type === 'IDAT' || type === 'IEND') return {};
      if (type === 'pHYs') {
        if (length !== 9 || got < chunk.length || chunk[16] !== METRE) return {};
        const px = chunk.readUInt32BE(8), py = chunk.readUInt32BE(12);
        if (px === 0 || py === 0) return {};
        const stated = defaultDensity(px / 1000) ?? defaultDensity(py / 1000);
        if (stated !== undefined) return { ignored: `a pHYs of ${stated}` };
        return { size: { x: inverse(1e6, px), y: inverse(1e6, py), unitX: 'micrometer', unitY: 'micrometer' } };
      }
      at += 12 + length;
    }
  } finally {
    fs.closeSync(fd);
  }
}

const TAG = { description: 270, xResolution: 282, yResolution: 283, resolutionUnit: 296 } as const;
/** TIFF ResolutionUnit: 1 none, 2 inch (the default when the tag is absent), 3 centimetre. */
const NONE = 1, CENTIMETRE = 3;

/**
 * OME-XML first (the microscope's own record), then an Aperio description's MPP, then ImageJ's calibration, then the
 * resolution tags in centimetres. A resolution in inches is not read: inch is TIFF's default unit, and writers fill it
 * with 72 or 300 dpi (sharp with 25.4) whatever the pixels show; OME-TIFF, Aperio, ImageJ, NDPI and libvips write a
 * real size as one of the others. What was stated but not taken is kept, the first of it, for the build to say.
 */
function tiffPixelSize(path: string, page: number): StatedPixelSize {
  const tags = tiffTags(path, Object.values(TAG), page);
  if (tags === undefined) return {};
  const description = tags.get(TAG.description);
  const text = typeof description === 'string' ? description : '';
  const perUnit = (v: TagValue | undefined) => (Array.isArray(v) && v.length >= 2 && v[0] > 0 && v[1] > 0 ? v[0] / v[1] : undefined);
  const rx = perUnit(tags.get(TAG.xResolution));
  // YResolution goes with XResolution; a file without it has square pixels.
  const ry = perUnit(tags.get(TAG.yResolution)) ?? rx;
  let ignored: string | undefined;
  if (/<(\w+:)?OME[\s>]/.test(text)) {
    const ome = omePixelSize(text);
    if (ome.size) return ome;
    ignored ??= ome.ignored;
  }
  if (text.startsWith('Aperio')) {
    const mpp = aperioMpp(text);
    if (mpp !== undefined) return { size: { x: mpp, y: mpp, unitX: 'micrometer', unitY: 'micrometer' } };
  }
  if (text.startsWith('ImageJ=') && rx !== undefined && ry !== undefined) {
    const imagej = imageJPixelSize(text, rx, ry);
    if (imagej) return { size: imagej };
  }
  const tag = tags.get(TAG.resolutionUnit);
  const unit = Array.isArray(tag) ? tag[0] : 2;
  // Resolution without a unit is the pixels' aspect ratio only: no size, and nothing to say.
  if (rx === undefined || ry === undefined || unit === NONE) return ignored === undefined ? {} : { ignored };
  if (unit !== CENTIMETRE) return { ignored: ignored ?? `a resolution of ${inchDensity(rx)}` };
  const stated = defaultDensity(rx / 10) ?? defaultDensity(ry / 10);
  if (stated !== undefined) return { ignored: ignored ?? `a resolution of ${stated}` };
  return { size: { x: inverse(1e4, rx), y: inverse(1e4, ry), unitX: 'micrometer', unitY: 'micrometer' } };
}

/**
 * An Aperio ImageDescription's `MPP = 0.2527` (micrometres per pixel, square pixels), one of its `|`-separated
 * fields; undefined when it has none or not a positive number.
 */
function aperioMpp(description: string): number | undefined {
  const m = /\|\s*MPP\s*=\s*([^|\r\n]*)/.exec(description);
  const mpp = m ? Number(m[1].trim()) : NaN;
  return Number.isFinite(mpp) && mpp > 0 ? mpp : undefined;
}

/** Unit names in OME's UnitsLength and ImageJ's calibration, to the spec's; those the spec lists stand for themselves. */
const UNIT_NAMES: ReadonlyMap<string, AxisUnit> = new Map<string, AxisUnit>([
  ...AXIS_UNITS.map((u): [string, AxisUnit] => [u, u]),
  ['Ym', 'yottameter'], ['Zm', 'zettameter'], ['Em', 'exameter'], ['Pm', 'petameter'], ['Tm', 'terameter'],
  ['Gm', 'gigameter'], ['Mm', 'megameter'], ['km', 'kilometer'], ['hm', 'hectometer'], ['m', 'meter'],
  ['dm', 'decimeter'], ['cm', 'centimeter'], ['mm', 'millimeter'], ['µm', 'micrometer'], ['μm', 'micrometer'],
  ['um', 'micrometer'], ['micron', 'micrometer'], ['microns', 'micrometer'], ['nm', 'nanometer'],
  ['pm', 'picometer'], ['fm', 'femtometer'], ['am', 'attometer'], ['zm', 'zeptometer'], ['ym', 'yoctometer'],
  ['Å', 'angstrom'], ['in', 'inch'], ['ft', 'foot'], ['yd', 'yard'], ['mi', 'mile'], ['pc', 'parsec'],
]);

/** A unit name as OME or ImageJ writes it, in the spec's words; 'pixel' (uncalibrated) and unknown names: undefined. */
function unitNamed(name: string): AxisUnit | undefined {
  const unit = UNIT_NAMES.get(name.trim());
  return unit === 'pixel' ? undefined : unit;
}

/**
 * The first image's PhysicalSizeX and PhysicalSizeY with their units (µm when absent, as OME's schema defaults), from
 * its `Pixels` element. None when either size is missing or not a positive number (nothing stated), or uncalibrated
 * (unit pixel); a unit the spec does not list (OME's thou, line, point, light year…) is stated but not taken.
 */
function omePixelSize(xml: string): StatedPixelSize {
  const pixels = /<(?:\w+:)?Pixels\s([^>]*)>/.exec(xml);
  if (!pixels) return {};
  const attrs = new Map<string, string>();
  for (const m of pixels[1].matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs.set(m[1], xmlText(m[2] ?? m[3]));
  const size = (name: string) => {
    const v = Number(attrs.get(name) ?? NaN);
    return Number.isFinite(v) && v > 0 ? v : undefined;
  };
  const x = size('PhysicalSizeX'), y = size('PhysicalSizeY');
  const namedX = attrs.get('PhysicalSizeXUnit') ?? 'µm', namedY = attrs.get('PhysicalSizeYUnit') ?? 'µm';
  const unitX = unitNamed(namedX), unitY = unitNamed(namedY);
  if (x === undefined || y === undefined) return {};
  if (unitX !== undefined && unitY !== undefined) return { size: { x, y, unitX, unitY } };
  const unknown = [namedX, namedY].filter((n) => unitNamed(n) === undefined && UNIT_NAMES.get(n.trim()) !== 'pixel');
  return unknown.length === 0 ? {} : { ignored: `PhysicalSizeX/Y of ${x} ${namedX} × ${y} ${namedY} (OME-XML), in a unit the spec has no name for` };
}

/** An XML attribute's text with its character references and the five named entities resolved (`&#181;m` is µm). */
function xmlText(s: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return s.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (all, ref: string) => {
    if (ref[0] !== '#') return named[ref] ?? all;
    const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : all;
  });
}

/**
 * ImageJ's calibration: `unit=` (and `yunit=` when y's differs) in its ImageDescription, the resolution tags giving
 * pixels per that unit. ImageJ writes µ as the escape `\u00B5`.
 */
function imageJPixelSize(description: string, rx: number, ry: number): PixelSize | undefined {
  const field = (key: string) => new RegExp(`^${key}=(.*)$`, 'm').exec(description)?.[1].replace(/\\u00b5/gi, 'µ');
  const unit = field('unit');
  const unitX = unit === undefined ? undefined : unitNamed(unit);
  const unitY = unitNamed(field('yunit') ?? unit ?? '');
  if (unitX === undefined || unitY === undefined) return undefined;
  return { x: inverse(1, rx), y: inverse(1, ry), unitX, unitY };
}
