// The slide's pixel size from --image: the descriptor's multiscale when no input states one; a warning when the image
// states another size than the inputs (theirs is kept); one line when it states only a default; sharded builds alike.
import fs from 'node:fs';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { maskSource } from '../../src/io/mask-source.js';
import { memorySource } from '../../src/io/read.js';
import { MemorySink } from '../../src/io/sink.js';
import type { FeatureSource, Source } from '../../src/io/source.js';
import { defaultLine } from '../helpers/pixel-size.js';
import { sinkJson as json, tmpDir } from '../helpers/pyramid.js';
import { littleEndianTiff, type TiffEntry } from '../helpers/tiff.js';

const W = 600, H = 400;
const dir = tmpDir('mudm-image-pixel');

/** The multiscale of `x` by `y` pixels in `unit`, as the descriptor should carry it. */
function scale(x: number, y: number, unit = 'micrometer'): Record<string, unknown> {
  return { axes: [{ name: 'x', type: 'space', unit }, { name: 'y', type: 'space', unit }], coordinateTransformations: [{ type: 'scale', scale: [x, y] }] };
}

/** A W × H grey TIFF with `extra` entries (ImageDescription, resolution tags); its strip is cut short: only its header is read. */
function tiff(name: string, extra: TiffEntry[]): string {
  const entries: TiffEntry[] = [[256, 4, W], [257, 4, H], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, H], [279, 4, W * H], ...extra];
  const file = path.join(dir, name);
  fs.writeFileSync(file, littleEndianTiff(entries.sort((a, b) => a[0] - b[0]), new Uint8Array(16)));
  return file;
}

const ome = (attrs: string) => `<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="${W}" SizeY="${H}" SizeZ="1" SizeC="1" SizeT="1" ${attrs}><TiffData/></Pixels></Image></OME>`;
/** An Aperio SVS description as its scanners write it: a header line, then `|`-separated fields, MPP in µm. */
const SVS = `Aperio Image Library v12.0.15\r\n${W}x${H} [0,100 ${W}x${H - 100}] (240x240) JPEG/RGB Q=70|AppMag = 40|StripeWidth = 992|ScanScope ID = SS1302|Date = 05/04/21|MPP = 0.2527|Left = 25.69|Top = 23.44`;

const grey = () => sharp({ create: { width: W, height: H, channels: 3, background: '#888' } });
async function written(name: string, write: (s: Sharp) => Sharp): Promise<string> {
  const file = path.join(dir, name);
  await write(grey()).toFile(file);
  return file;
}

/** Annotations: one cell, with `multiscale` when given. */
function cells(multiscale?: unknown): Source {
  return memorySource('cells.json', JSON.stringify({ type: 'FeatureCollection', ...(multiscale ? { multiscale } : {}), features: [{ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [30, 20] } }] }));
}

/** A build with --image in memory: its descriptor's multiscale (checked against the JSON tiles'), warnings and information lines. */
async function build(image: string, ...inputs: (Source | FeatureSource)[]): Promise<{ multiscale: unknown; warnings: [string, unknown][]; infos: [string, unknown][] }> {
  const sink = new MemorySink();
  const warnings: [string, unknown][] = [], infos: [string, unknown][] = [];
  await buildPyramid(inputs.map((source) => ({ source })), { image, maxZoom: 1, workers: 1 }, { sink, onWarning: (m, d) => warnings.push([m, d]), onInfo: (m, d) => infos.push([m, d]) });
  const multiscale = json(sink, 'tileset.json').multiscale;
  expect(json(sink, '1/0/0.json').multiscale).toEqual(multiscale);
  return { multiscale, warnings, infos };
}

describe('the pixel size of --image', () => {
  it('is the descriptor\'s multiscale when no input states one: OME-XML, Aperio MPP, ImageJ, resolution in cm, pHYs', async () => {
    const images = [
      [tiff('slide.ome.tif', [[270, 2, ome('PhysicalSizeX="0.2201" PhysicalSizeY="0.2202"')]]), scale(0.2201, 0.2202)],
      [tiff('nm.ome.tif', [[270, 2, ome('PhysicalSizeX="250" PhysicalSizeXUnit="nm" PhysicalSizeY="250" PhysicalSizeYUnit="nm"')]]), scale(250, 250, 'nanometer')],
      // The MPP wins over the resolution tags (here 1 µm in cm), as the scanner's own record.
      [tiff('slide.svs', [[270, 2, SVS], [282, 5, [10000, 1]], [283, 5, [10000, 1]], [296, 3, 3]]), scale(0.2527, 0.2527)],
      [tiff('ij.tif', [[270, 2, 'ImageJ=1.54f\nunit=micron\n'], [282, 5, [3076923, 1000000]], [283, 5, [3076923, 1000000]], [296, 3, 1]]), scale(0.325, 0.325)],
      // NDPI and libvips write the resolution in centimetres; sharp's xres is pixels per millimetre.
      [await written('ndpi.tif', (s) => s.tiff({ xres: 4000, yres: 2000, resolutionUnit: 'cm' })), scale(0.25, 0.5)],
      [await written('slide.png', (s) => s.withDensity(25400 / 0.5).png()), scale(0.5, 0.5)],
    ] as const;
    for (const [image, expected] of images) {
      const r = await build(image, cells());
      expect(r, image).toEqual({ multiscale: expected, warnings: [], infos: [] });
    }
  });

  it('gives way to the inputs\' multiscale, with a warning when the image states another size (units converted)', async () => {
    const half = tiff('half.ome.tif', [[270, 2, ome('PhysicalSizeX="0.5" PhysicalSizeY="0.5"')]]);
    const r = await build(half, cells(scale(0.25, 0.25)));
    expect(r.multiscale).toEqual(scale(0.25, 0.25));
    expect(r.infos).toEqual([]);
    expect(r.warnings).toEqual([[
      `--image ${half} states a pixel of 0.5 × 0.5 micrometer, and the multiscale of cells.json a pixel of 0.25 × 0.25 micrometer: the descriptor keeps cells.json's, as the annotations' own statement of their coordinates; is ${half} the slide they were drawn on, at the resolution they were drawn at?`,
      { event: 'image-pixel-size-differs', image: half, imagePixel: { x: 0.5, y: 0.5, unitX: 'micrometer', unitY: 'micrometer' }, inputsPixel: { x: 0.25, y: 0.25, unitX: 'micrometer', unitY: 'micrometer' }, keptFrom: 'cells.json' },
    ]]);
    // A multiscale whose axes have no unit states no size: the image's is left out all the same, and said so.
    const unitless = { axes: [{ name: 'x', type: 'space' }, { name: 'y', type: 'space' }] };
    const bare = await build(half, cells(unitless));
    expect(bare.multiscale).toEqual(unitless);
    expect(bare.warnings.map(([m, d]) => [m.slice(m.indexOf(', and') + 2, m.indexOf(':')), (d as { inputsPixel: unknown }).inputsPixel])).toEqual([['and the multiscale of cells.json no pixel size (no axes x and y with units)', null]]);
    // The same size in nanometres, or to within a millionth (a size read back from a resolution): nothing to say.
    const quarter = tiff('quarter.ome.tif', [[270, 2, ome('PhysicalSizeX="0.25" PhysicalSizeY="0.25"')]]);
    expect(await build(quarter, cells(scale(250, 250, 'nanometer')))).toEqual({ multiscale: scale(250, 250, 'nanometer'), warnings: [], infos: [] });
    expect(await build(quarter, cells(scale(0.2500001, 0.25)))).toEqual({ multiscale: scale(0.2500001, 0.25), warnings: [], infos: [] });
  });

  it('says in one line that a default it states (print dpi, libvips\' 1 px/mm) gives no size; a JPEG\'s dpi is not read', async () => {
    const print = await written('print.png', (s) => s.withDensity(300).png());
    expect(await build(print, cells())).toEqual({ multiscale: undefined, warnings: [], infos: [defaultLine(print, 'a pHYs of 300 dpi, a print default')] });
    const inch = await written('inch.tif', (s) => s.tiff({ xres: 72 / 25.4, yres: 72 / 25.4, resolutionUnit: 'inch' }));
    expect(await build(inch, cells())).toEqual({ multiscale: undefined, warnings: [], infos: [defaultLine(inch, 'a resolution of 72 dpi, a print default')] });
    // Once for the build, naming the image first, though a mask states a default too.
    const mask = path.join(dir, 'labels.png');
    await sharp(Buffer.alloc(W * H, 1), { raw: { width: W, height: H, channels: 1 } }).toColourspace('b-w').png().toFile(mask);
    const both = await build(print, maskSource(mask));
    expect(both.infos).toEqual([defaultLine(print, 'a pHYs of 300 dpi, a print default', 2)]);
    // Moot when the annotations give a size.
    expect(await build(print, cells(scale(0.25, 0.25)))).toEqual({ multiscale: scale(0.25, 0.25), warnings: [], infos: [] });
    expect(await build(await written('slide.jpg', (s) => s.withDensity(300).jpeg()), cells())).toEqual({ multiscale: undefined, warnings: [], infos: [] });
  });

  it('reaches the descriptor of a sharded build (plan, shards, finalize) as of a build on one machine', async () => {
    const image = tiff('sharded.svs', [[270, 2, SVS]]);
    const opts = { image, maxZoom: 2, unitSize: 256, workers: 1 } as const;
    const one = path.join(dir, 'one'), sharded = path.join(dir, 'sharded');
    await buildPyramid([{ source: cells() }], { ...opts, out: one });
    await planShardedBuild([{ source: cells() }], { ...opts, out: sharded, shards: 2 });
    // The shards and finalize are not given --image: the plan carries the size.
    for (const i of [1, 0]) await buildShard({ out: sharded, workers: 1 }, i);
    await finalizeShardedBuild({ out: sharded, workers: 1 });
    const descriptor = (out: string) => JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as Record<string, unknown>;
    expect(descriptor(sharded).multiscale).toEqual(scale(0.2527, 0.2527));
    expect(descriptor(sharded)).toEqual(descriptor(one));
  });
});
