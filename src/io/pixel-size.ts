// The physical size of a label mask's pixel where its file states it (OME-XML, ImageJ's calibration, a TIFF's
// resolution in centimetres, a PNG's pHYs in metres), and the multiscale object that says it in a descriptor.
import fs from 'node:fs';
import { AXIS_UNITS, type AxisUnit, type Multiscale } from '../model/multiscale.js';
import { tiffTags, type TagValue } from './tiff-header.js';

/** A pixel's width and height, each in its unit. */
export interface PixelSize { x: number; y: number; unitX: AxisUnit; unitY: AxisUnit }

/**
 * The pixel size the mask's file states, or undefined when it states none (or only a default that is none: see
 * `isDefaultDensity`). sharp's metadata is not enough: it gives a TIFF's or PNG's horizontal density alone, as dots
 * per inch, calls a PNG's metres inches, and gives neither the ImageDescription (OME-XML, ImageJ) nor a TIFF
 * resolution without a unit; so the headers are read here.
 */
export function maskPixelSize(path: string, format: 'tiff' | 'png'): PixelSize | undefined {
  return format === 'tiff' ? tiffPixelSize(path) : pngPixelSize(path);
}

/** Axes x and y of the pixel's units and a scale to them: what a GeoJSON input's `multiscale` member says. */
export function pixelSizeMultiscale(size: PixelSize): Multiscale {
  return {
    axes: [{ name: 'x', type: 'space', unit: size.unitX }, { name: 'y', type: 'space', unit: size.unitY }],
    coordinateTransformations: [{ type: 'scale', scale: [size.x, size.y] }],
  };
}

const TAG = { description: 270, xResolution: 282, yResolution: 283, resolutionUnit: 296 } as const;
/** TIFF ResolutionUnit: 1 none, 2 inch (the default when the tag is absent), 3 centimetre. */
const CENTIMETRE = 3;

/**
 * OME-XML first (the microscope's own record), then ImageJ's calibration, then the resolution tags in centimetres.
 * A resolution in inches is not read: inch is TIFF's default unit, and writers fill it with 72 or 300 dpi (sharp
 * with 25.4) whatever the pixels show, so it tells nothing of a microscope's pixel; OME-TIFF, ImageJ and libvips
 * write a real size as one of the others.
 */
function tiffPixelSize(path: string): PixelSize | undefined {
  const tags = tiffTags(path, Object.values(TAG));
  if (tags === undefined) return undefined;
  const description = tags.get(TAG.description);
  const text = typeof description === 'string' ? description : '';
  const perUnit = (v: TagValue | undefined) => (Array.isArray(v) && v.length >= 2 && v[0] > 0 && v[1] > 0 ? v[0] / v[1] : undefined);
  const rx = perUnit(tags.get(TAG.xResolution));
  // YResolution goes with XResolution; a file without it has square pixels.
  const ry = perUnit(tags.get(TAG.yResolution)) ?? rx;
  if (/<(\w+:)?OME[\s>]/.test(text)) {
    const ome = omePixelSize(text);
    if (ome) return ome;
  }
  if (text.startsWith('ImageJ=') && rx !== undefined && ry !== undefined) {
    const imagej = imageJPixelSize(text, rx, ry);
    if (imagej) return imagej;
  }
  const unit = tags.get(TAG.resolutionUnit);
  if (!Array.isArray(unit) || unit[0] !== CENTIMETRE || rx === undefined || ry === undefined) return undefined;
  if (isDefaultDensity(rx / 10) || isDefaultDensity(ry / 10)) return undefined;
  return { x: inverse(1e4, rx), y: inverse(1e4, ry), unitX: 'micrometer', unitY: 'micrometer' };
}

/**
 * Dots per inch that image editors and libraries write when nobody gave a size (screen and print resolutions), which
 * a PNG (whose only unit is the metre) or a TIFF in centimetres carries as well: none is a microscope's pixel.
 */
const PRINT_DPI = [72, 75, 96, 100, 120, 144, 150, 200, 240, 300, 400, 600, 720, 1200, 2400];

/**
 * Whether a density (pixels per millimetre) is a default rather than a size: libvips' 1 px/mm (sharp writes it into
 * every PNG's pHYs, and libvips into a TIFF in centimetres, when no density is set) or a round screen or print dpi.
 * A pHYs holds whole pixels per metre, so such a dpi comes back within 0.0127 of itself.
 */
function isDefaultDensity(perMm: number): boolean {
  if (Math.abs(perMm - 1) < 1e-6) return true;
  const dpi = perMm * 25.4;
  return PRINT_DPI.some((d) => Math.abs(dpi - d) < 0.02);
}

/**
 * `units / perUnit`, to 6 significant digits: a resolution is the size's inverse rounded (to whole pixels per metre
 * in a pHYs, to a ratio of integers in a TIFF, ImageJ's to millionths), and its inverse is the size given plus noise
 * in the 7th digit (0.325 µm comes back as 0.32500003).
 */
function inverse(units: number, perUnit: number): number {
  return Number((units / perUnit).toPrecision(6));
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
 * its `Pixels` element; undefined when either size is missing or not a positive number, or a unit is not one the
 * spec lists (OME's thou, line, point, light year…).
 */
function omePixelSize(xml: string): PixelSize | undefined {
  const pixels = /<(?:\w+:)?Pixels\s([^>]*)>/.exec(xml);
  if (!pixels) return undefined;
  const attrs = new Map<string, string>();
  for (const m of pixels[1].matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs.set(m[1], xmlText(m[2] ?? m[3]));
  const size = (name: string) => {
    const v = Number(attrs.get(name) ?? NaN);
    return Number.isFinite(v) && v > 0 ? v : undefined;
  };
  const x = size('PhysicalSizeX'), y = size('PhysicalSizeY');
  const unitX = unitNamed(attrs.get('PhysicalSizeXUnit') ?? 'µm'), unitY = unitNamed(attrs.get('PhysicalSizeYUnit') ?? 'µm');
  if (x === undefined || y === undefined || unitX === undefined || unitY === undefined) return undefined;
  return { x, y, unitX, unitY };
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

/** The eight bytes every PNG file opens with. */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** pHYs unit 1: pixels per metre (0 gives the pixels' aspect ratio only). */
const METRE = 1;

/** A PNG's pHYs in metres, which comes before the image data; the chunks before it are stepped over, not read. */
function pngPixelSize(path: string): PixelSize | undefined {
  const fd = fs.openSync(path, 'r');
  try {
    const head = Buffer.alloc(8);
    if (fs.readSync(fd, head, 0, 8, 0) < 8 || !head.equals(PNG_SIGNATURE)) return undefined;
    const chunk = Buffer.alloc(8 + 9);
    for (let at = 8; ;) {
      const got = fs.readSync(fd, chunk, 0, chunk.length, at);
      if (got < 8) return undefined;
      const length = chunk.readUInt32BE(0), type = chunk.toString('latin1', 4, 8);
      if (type === 'IDAT' || type === 'IEND') return undefined;
      if (type === 'pHYs') {
        if (length !== 9 || got < chunk.length || chunk[16] !== METRE) return undefined;
        const px = chunk.readUInt32BE(8), py = chunk.readUInt32BE(12);
        if (px === 0 || py === 0 || isDefaultDensity(px / 1000) || isDefaultDensity(py / 1000)) return undefined;
        return { x: inverse(1e6, px), y: inverse(1e6, py), unitX: 'micrometer', unitY: 'micrometer' };
      }
      at += 12 + length;
    }
  } finally {
    fs.closeSync(fd);
  }
}
