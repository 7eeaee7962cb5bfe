// A label mask's stated pixel size (OME-XML, ImageJ, TIFF resolution in cm, PNG pHYs in metres) reaches the
// descriptor as its multiscale; defaults that state no size (inches, 1 px/mm, print dpi) give none, and one line says so.
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import sharp, { type TiffOptions } from 'sharp';
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { maskSource } from '../../src/io/mask-source.js';
import { memorySource } from '../../src/io/read.js';
import { MemorySink } from '../../src/io/sink.js';
import type { FeatureSource, Source } from '../../src/io/source.js';
import { sinkJson as json, tmpDir } from '../helpers/pyramid.js';
import { defaultLine } from '../helpers/pixel-size.js';
import { littleEndianTiff, type TiffEntry } from '../helpers/tiff.js';

const W = 512, H = 256;
/** Two labels side by side. */
const LABELS = Uint8Array.from({ length: W * H }, (_, i) => ((i % W) < W / 2 ? 1 : 2));

const dir = tmpDir('mudm-pixel-size');

/** The multiscale of `x` µm by `y` µm pixels, as the descriptor should carry it. */
function microns(x: number, y: number, unitX = 'micrometer', unitY = unitX): Record<string, unknown> {
  return { axes: [{ name: 'x', type: 'space', unit: unitX }, { name: 'y', type: 'space', unit: unitY }], coordinateTransformations: [{ type: 'scale', scale: [x, y] }] };
}

/** An 8-bit TIFF of LABELS with `extra` entries (ImageDescription, resolution tags), written by hand: sharp writes no description. */
function tiffWith(name: string, extra: TiffEntry[]): string {
  const entries: TiffEntry[] = [
    [256, 4, W], [257, 4, H], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, H], [279, 4, W * H], ...extra,
  ];
  const file = path.join(dir, name);
  fs.writeFileSync(file, littleEndianTiff(entries.sort((a, b) => a[0] - b[0]), LABELS));
  return file;
}

function ome(pixelsAttributes: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0" Name="labels"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="${W}" SizeY="${H}" SizeZ="1" SizeC="1" SizeT="1" ${pixelsAttributes}><Channel ID="Channel:0:0"/><TiffData IFD="0" PlaneCount="1"/></Pixels></Image></OME>`;
}

const image = () => sharp(Buffer.from(LABELS), { raw: { width: W, height: H, channels: 1 } }).toColourspace('b-w');

/** The files' pyramid, built in memory, and the warnings and information lines of its build. */
async function build(...inputs: (Source | FeatureSource)[]): Promise<{ sink: MemorySink; warnings: [string, unknown][]; infos: [string, unknown][] }> {
  const sink = new MemorySink();
  const warnings: [string, unknown][] = [], infos: [string, unknown][] = [];
  await buildPyramid(inputs.map((source) => ({ source })), { maxZoom: 1, workers: 1 }, { sink, onWarning: (m, d) => warnings.push([m, d]), onInfo: (m, d) => infos.push([m, d]) });
  return { sink, warnings, infos };
}

/**
 * The descriptor's multiscale of a build of one mask (undefined: none), checked against its JSON tiles'; `ignored`:
 * what the mask states that is not taken, which the build says in one line of information.
 */
async function multiscaleOf(file: string, ignored?: string): Promise<unknown> {
  const { sink, warnings, infos } = await build(maskSource(file));
  expect(warnings).toEqual([]);
  expect(infos).toEqual(ignored === undefined ? [] : [defaultLine(file, ignored)]);
  const m = json(sink, 'tileset.json').multiscale;
  // JSON tiles are headed by it too (and the zoom-0 overview descriptor carries it).
  expect(json(sink, '1/0/0.json').multiscale).toEqual(m);
  expect(json(sink, '0/0/0.json').multiscale).toEqual(m);
  return m;
}

describe('a label mask\'s pixel size in the descriptor', () => {
  it('reads an OME-TIFF\'s PhysicalSizeX/Y, in µm when no unit is given, else in the unit named', async () => {
    expect(await multiscaleOf(tiffWith('ome.ome.tif', [[270, 2, ome('PhysicalSizeX="0.2201" PhysicalSizeY="0.2202"')]]))).toEqual(microns(0.2201, 0.2202));
    expect(await multiscaleOf(tiffWith('ome-nm.ome.tif', [[270, 2, ome('PhysicalSizeX="4" PhysicalSizeXUnit="nm" PhysicalSizeY="4.5" PhysicalSizeYUnit="nm"')]]))).toEqual(microns(4, 4.5, 'nanometer'));
    // µ as UTF-8 and as a character reference; OME's attribute beats the resolution tags (here 1 µm in cm).
    const both: TiffEntry[] = [[282, 5, [10000, 1]], [283, 5, [10000, 1]], [296, 3, 3]];
    expect(await multiscaleOf(tiffWith('ome-mu.ome.tif', [[270, 2, ome('PhysicalSizeX="0.5" PhysicalSizeXUnit="µm" PhysicalSizeY="0.5" PhysicalSizeYUnit="&#181;m"')], ...both]))).toEqual(microns(0.5, 0.5));
    // OME-XML without a size (a label export that dropped it): the resolution tags still say one.
    expect(await multiscaleOf(tiffWith('ome-none.ome.tif', [[270, 2, ome('')], ...both]))).toEqual(microns(1, 1));
    // A unit the spec has no name for (OME's "thou"), or an uncalibrated "pixel": no size rather than a wrong one.
    const thou = tiffWith('ome-thou.ome.tif', [[270, 2, ome('PhysicalSizeX="1" PhysicalSizeXUnit="thou" PhysicalSizeY="1" PhysicalSizeYUnit="thou"')]]);
    expect(await multiscaleOf(thou, 'PhysicalSizeX/Y of 1 thou × 1 thou (OME-XML), in a unit the spec has no name for')).toBeUndefined();
    expect(await multiscaleOf(tiffWith('ome-px.ome.tif', [[270, 2, ome('PhysicalSizeX="1" PhysicalSizeXUnit="pixel" PhysicalSizeY="1" PhysicalSizeYUnit="pixel"')]]))).toBeUndefined();
  });

  it('reads an ImageJ TIFF\'s calibration: unit= in its description, pixels per unit in XResolution/YResolution', async () => {
    // ImageJ writes 1/0.325 px/µm to millionths and ResolutionUnit none; the size comes back as 0.325, not 0.32500003.
    const res: TiffEntry[] = [[282, 5, [3076923, 1000000]], [283, 5, [3076923, 1000000]], [296, 3, 1]];
    expect(await multiscaleOf(tiffWith('ij.tif', [[270, 2, 'ImageJ=1.54f\nunit=micron\n'], ...res]))).toEqual(microns(0.325, 0.325));
    expect(await multiscaleOf(tiffWith('ij-mu.tif', [[270, 2, 'ImageJ=1.54f\nunit=\\u00B5m\nyunit=nm\n'], ...res]))).toEqual(microns(0.325, 0.325, 'micrometer', 'nanometer'));
    // Uncalibrated (unit=pixel), or no unit at all: none, though the resolution tags are there.
    expect(await multiscaleOf(tiffWith('ij-px.tif', [[270, 2, 'ImageJ=1.54f\nunit=pixel\n'], ...res]))).toBeUndefined();
    expect(await multiscaleOf(tiffWith('ij-none.tif', [[270, 2, 'ImageJ=1.54f\nimages=1\n'], ...res]))).toBeUndefined();
  });

  it('reads a plain TIFF\'s resolution in centimetres, not in inches, nor libvips\' 1 px/mm or a print dpi in cm', async () => {
    const write = async (name: string, options: TiffOptions) => { const f = path.join(dir, name); await image().tiff({ compression: 'lzw', ...options }).toFile(f); return f; };
    // sharp's xres/yres are pixels per millimetre: 4,000 and 2,000 are 0.25 and 0.5 µm.
    expect(await multiscaleOf(await write('cm.tif', { xres: 4000, yres: 2000, resolutionUnit: 'cm' }))).toEqual(microns(0.25, 0.5));
    expect(await multiscaleOf(await write('inch.tif', { xres: 4000, yres: 4000, resolutionUnit: 'inch' }), 'a resolution of 101600 dpi, in inches: TIFF\'s default unit, in which writers put print sizes')).toBeUndefined();
    const vips = '1 pixel per millimetre (25.4 dpi), libvips\' default when no size is given';
    expect(await multiscaleOf(await write('default.tif', {}), `a resolution of ${vips}`)).toBeUndefined();
    expect(await multiscaleOf(await write('cm-default.tif', { resolutionUnit: 'cm' }), `a resolution of ${vips}`)).toBeUndefined();
    expect(await multiscaleOf(await write('cm-72dpi.tif', { xres: 72 / 25.4, yres: 72 / 25.4, resolutionUnit: 'cm' }), 'a resolution of 72 dpi, a print default')).toBeUndefined();
    // Resolution without a unit is an aspect ratio: nothing stated, nothing said.
    expect(await multiscaleOf(tiffWith('aspect.tif', [[282, 5, [4, 1]], [283, 5, [4, 1]], [296, 3, 1]]))).toBeUndefined();
  });

  it('reads a PNG\'s pHYs in metres, but not sharp\'s default 1 px/mm, a print dpi or a pHYs without unit', async () => {
    const write = async (name: string, dpi?: number) => { const f = path.join(dir, name); await (dpi === undefined ? image() : image().withDensity(dpi)).png().toFile(f); return f; };
    expect(await multiscaleOf(await write('d.png', 25400 / 0.25))).toEqual(microns(0.25, 0.25));
    expect(await multiscaleOf(await write('d325.png', 25400 / 0.325))).toEqual(microns(0.325, 0.325));
    expect(await multiscaleOf(await write('plain.png'), 'a pHYs of 1 pixel per millimetre (25.4 dpi), libvips\' default when no size is given')).toBeUndefined();
    expect(await multiscaleOf(await write('print.png', 300), 'a pHYs of 300 dpi, a print default')).toBeUndefined();
    // The same 0.25 µm with unit 0 (an aspect ratio only).
    const bytes = fs.readFileSync(await write('d-unitless.png', 25400 / 0.25));
    const at = bytes.indexOf('pHYs', 0, 'latin1');
    bytes[at + 4 + 8] = 0;
    bytes.writeUInt32BE(crc32(bytes.subarray(at, at + 4 + 9)), at + 4 + 9);
    fs.writeFileSync(path.join(dir, 'unitless.png'), bytes);
    expect(await multiscaleOf(path.join(dir, 'unitless.png'))).toBeUndefined();
  });

  it('keeps the first input\'s pixel size when masks differ, and says so as of GeoJSON inputs', async () => {
    const a = tiffWith('a.ome.tif', [[270, 2, ome('PhysicalSizeX="0.25" PhysicalSizeY="0.25"')]]);
    const b = tiffWith('b.ome.tif', [[270, 2, ome('PhysicalSizeX="0.5" PhysicalSizeY="0.5"')]]);
    const { sink, warnings } = await build(maskSource(a), maskSource(b));
    expect(json(sink, 'tileset.json').multiscale).toEqual(microns(0.25, 0.25));
    expect(warnings).toEqual([[
      `1 input(s) (${b}) have other multiscale than ${a}, and the pyramid keeps ${a}'s for every layer: their features are described with another pixel size or terms: build such inputs into pyramids of their own`,
      { event: 'collection-members-differ', member: 'multiscale', files: 1, first: b, keptFrom: a },
    ]]);
    // A GeoJSON input saying the same size as the mask: nothing differs.
    const doc = JSON.stringify({ type: 'FeatureCollection', multiscale: microns(0.25, 0.25), features: [{ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [3, 3] } }] });
    const same = await build(memorySource('cells.json', doc), maskSource(a));
    expect(same.warnings).toEqual([]);
    expect(json(same.sink, 'tileset.json').multiscale).toEqual(microns(0.25, 0.25));
  });
});
