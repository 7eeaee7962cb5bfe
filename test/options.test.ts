// Option resolution: defaults, the typed build config, every range check and text parser, with message and exit code.
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { budgetNeeded, defaultWorkers, workersCarried } from '../src/memory.js';
import { parseFormats, parseImageSize, parsePlane, parsePlaneFields, resolveBuildConfig, resolveOptions, type Options } from '../src/options.js';
import { MAX_ZOOM } from '../src/tiling/space.js';
import { buildPyramid } from '../src/build/pipeline.js';
import { parseArgs } from '../src/cli/args.js';
import { EXIT_USAGE, UsageError } from '../src/report/errors.js';
import { refusal as refuse } from './helpers/errors.js';

const refusal = (f: () => unknown) => refuse(f, UsageError, EXIT_USAGE);

const config = (given: Partial<Options>) => resolveBuildConfig({ out: 'out', ...given });

describe('resolveBuildConfig', () => {
  it('fills defaults and turns option text into values', () => {
    const c = config({ format: 'pbf', imageSize: '2000x1500', planeField: 't=frame,c=channel', lod: 'none', workers: 3 });
    expect(c.formats).toEqual({ json: false, pbf: true });
    expect(c.imageSize).toEqual({ width: 2000, height: 1500 });
    expect(c.planeFields).toEqual({ t: 'frame', c: 'channel' });
    expect(c.lod).toBe('none');
    expect(c.options).toMatchObject({ workers: 3, minZoom: 0, unitSize: 2048, tileBudget: 500 * 1024, memoryBudget: 1024 ** 3, version: '1.0.0' });
    const d = config({});
    expect(d.formats).toEqual({ json: true, pbf: true });
    expect(d.imageSize).toBeUndefined();
    expect(d.planeFields).toEqual({});
    expect(d.lod).toBe('auto');
  });

  it('takes the image header size unless --image-size is given', () => {
    expect(config({ image: 'slide.tif' }).imageSize).toBeUndefined();
    expect(resolveBuildConfig({ image: 'slide.tif' }, { width: 7, height: 9 }).imageSize).toEqual({ width: 7, height: 9 });
    // With --preview the image is drawn under the quicklooks too; without it, the two are refused (below).
    expect(resolveBuildConfig({ image: 'slide.tif', imageSize: '10,20', preview: true }, { width: 7, height: 9 }).imageSize).toEqual({ width: 10, height: 20 });
  });

  it('refuses two options of which one would be passed over in silence, saying which two and why', () => {
    const refused: [Partial<Options>, string][] = [
      [{ layer: 'X', layerPerFile: true }, '--layer X and --layer-per-file conflict: --layer names one layer for every input, --layer-per-file one for each file of a directory: give one of them'],
      [{ layer: 'X', layerBy: 'class' }, "--layer X and --layer-by class conflict: --layer-by names each feature's layer by its field, and --layer would name only the layer of features without that field: give one of them"],
      [{ layerPerFile: true, layerBy: 'class' }, "--layer-per-file and --layer-by class conflict: --layer-by names each feature's layer by its field, and --layer-per-file would name only the layers of features without that field: give one of them"],
      [{ lod: 'none', tileBudget: 1024 }, '--lod none and --tile-budget 1024 conflict: --lod none thins no zoom, so it holds no tile to a budget (--lod auto does): give one of them'],
      [{ image: 'slide.tif', imageSize: '10,20' }, '--image slide.tif and --image-size 10,20 conflict: both fix the size of the world, and without --preview the image is read for nothing else: give one of them'],
      [{ quiet: true, progress: 'json' }, '--quiet and --progress json conflict: --quiet prints nothing but errors, progress neither: give one of them'],
    ];
    for (const [given, message] of refused) expect(refusal(() => config(given)), message).toBe(message);
    // A default is no choice: the budget a --lod none build is given back from its report (null), or the default.
    for (const given of [{ lod: 'none', tileBudget: 500 * 1024 }, { lod: 'none', tileBudget: null }, { layer: 'X', layerPerFile: false }, { quiet: true, progress: 'none' }] as Partial<Options>[]) {
      expect(() => config(given), JSON.stringify(given)).not.toThrow();
    }
  });

  it('accepts the edges of every range', () => {
    expect(() => config({ workers: 1, unitSize: 256, minZoom: 0, maxZoom: 0, shards: 1, tileBudget: 1, memoryBudget: 1, format: 'pbf' })).not.toThrow();
    expect(() => config({ minZoom: MAX_ZOOM, maxZoom: MAX_ZOOM, unitSize: 2 ** 20 })).not.toThrow();
  });

  it('refuses values out of range, naming the option and the value', () => {
    expect(refusal(() => config({ workers: 0 }))).toBe('--workers must be a whole number of at least 1, found 0');
    expect(refusal(() => config({ workers: 1.5 }))).toBe('--workers must be a whole number of at least 1, found 1.5');
    expect(refusal(() => config({ unitSize: 1000 }))).toBe('--unit-size must be a power of two of at least 256, found 1000');
    expect(refusal(() => config({ unitSize: 128 }))).toBe('--unit-size must be a power of two of at least 256, found 128');
    expect(refusal(() => config({ minZoom: -1 }))).toBe(`--min-zoom must be 0..${MAX_ZOOM}, found -1`);
    expect(refusal(() => config({ minZoom: 31 }))).toBe(`--min-zoom must be 0..${MAX_ZOOM}, found 31`);
    expect(refusal(() => config({ minZoom: 3, maxZoom: 2 }))).toBe(`--max-zoom must be 3..${MAX_ZOOM} (at least --min-zoom), found 2`);
    expect(refusal(() => config({ maxZoom: 31 }))).toBe(`--max-zoom must be 0..${MAX_ZOOM} (at least --min-zoom), found 31`);
    expect(refusal(() => config({ shards: 0 }))).toBe('--shards must be a whole number of at least 1, found 0');
    expect(refusal(() => config({ tileBudget: 0 }))).toBe('--tile-budget must be positive, found 0');
    expect(refusal(() => config({ memoryBudget: -5 }))).toBe('--memory-budget must be positive, found -5');
    expect(refusal(() => config({ lod: 'some' }))).toBe('--lod must be auto or none, found "some"');
    expect(refusal(() => config({ tileCompression: 'zip' }))).toBe('--tile-compression takes auto, none or gzip, found "zip"');
    // A layer of no name (`--layer "$NAME"` with NAME unset): a manifest entry's empty layer is refused alike.
    expect(refusal(() => config({ layer: '' }))).toBe('--layer must be a layer name (a non-empty string), found ""');
    // JSON zoom 0 is the overview: the features would have no JSON tile.
    expect(refusal(() => config({ maxZoom: 0, format: 'json' }))).toMatch(/^--max-zoom 0 leaves JSON tiles no zoom for features/);
    expect(refusal(() => config({ maxZoom: 0 }))).toMatch(/^--max-zoom 0 leaves JSON tiles no zoom for features/);
  });

  it('takes a semver --version and an absolute http(s) --base-url, as TileJSON 3.0.0 and map clients need, and refuses others naming the value', () => {
    for (const version of ['1.0.0', '2.10.3', '1.2.3-rc.1+build.5']) expect(config({ version }).options.version).toBe(version);
    expect(refusal(() => config({ version: '1.2' }))).toBe('--version must be a semver version, MAJOR.MINOR.PATCH such as 1.2.0, as TileJSON 3.0.0 requires (1.2.0?); found "1.2"');
    expect(refusal(() => config({ version: 'not a version' }))).toBe('--version must be a semver version, MAJOR.MINOR.PATCH such as 1.2.0, as TileJSON 3.0.0 requires; found "not a version"');
    for (const version of ['v1.2.3', '01.2.3', '1.2.3.4', '']) expect(() => config({ version }), version).toThrow(/^--version must be a semver version/);
    for (const baseUrl of ['https://host/slides/a', 'http://localhost:8080/', 'https://[::1]:8443/t']) expect(config({ baseUrl }).options.baseUrl).toBe(baseUrl);
    const notUrl = (v: string) => `--base-url must be an absolute http or https URL such as https://host/slides/a (without it, tile paths are relative to tileset.json); found ${JSON.stringify(v)}`;
    // A relative base would be put before the paths as it is, and verify holds relative tile paths to the layout.
    for (const baseUrl of ['not a url', '/slides/a', 'slides/a', 'ftp://host/a', 'https:///a', 'https://host/a b']) expect(refusal(() => config({ baseUrl })), baseUrl).toBe(notUrl(baseUrl));
    expect(refusal(() => config({ baseUrl: 'https://host/a?token=x' }))).toBe('--base-url https://host/a?token=x has a query or fragment, which would come before the tile paths put after it; give the base alone');
  });

  it('takes --preview with PBF tiles only (previews are painted from the features), and refuses bad option text', () => {
    expect(config({ preview: true, format: 'pbf' }).formats).toEqual({ json: false, pbf: true });
    expect(refusal(() => config({ format: 'json,mvt' }))).toBe('--format takes json, pbf or json,pbf, found "mvt"');
    expect(refusal(() => config({ imageSize: '2000' }))).toBe('--image-size must be W,H in whole pixels of at least 1, found "2000"');
    expect(refusal(() => config({ planeField: 'q=frame' }))).toBe('--plane-field expects t=NAME,c=NAME,z=NAME, found "q=frame"');
  });
});

describe('option text', () => {
  it('formats', () => {
    expect(parseFormats('json')).toEqual({ json: true, pbf: false });
    expect(parseFormats('pbf,json')).toEqual({ json: true, pbf: true });
    expect(refusal(() => parseFormats(''))).toBe('--format takes json, pbf or json,pbf, found ""');
  });

  it('image sizes: W,H or WxH in whole pixels of at least 1', () => {
    expect(parseImageSize(' 10 , 20 ')).toEqual({ width: 10, height: 20 });
    expect(parseImageSize('1x1')).toEqual({ width: 1, height: 1 });
    for (const bad of ['0,5', '5,0', '-1,5', '1.5,2', 'a,b', '10,20,30', '']) {
      expect(refusal(() => parseImageSize(bad))).toBe(`--image-size must be W,H in whole pixels of at least 1, found "${bad}"`);
    }
    expect(refusal(() => parseImageSize('99999999999999999999,1'))).toMatch(/--image-size must be W,H/);
  });

  it('plane fields: each dimension once', () => {
    expect(parsePlaneFields(undefined)).toEqual({});
    expect(parsePlaneFields('z=slice')).toEqual({ z: 'slice' });
    expect(refusal(() => parsePlaneFields('t=a,t=b'))).toBe('--plane-field names t twice, found "t=a,t=b"');
    expect(refusal(() => parsePlaneFields('t='))).toBe('--plane-field expects t=NAME,c=NAME,z=NAME, found "t="');
  });

  it('planes of --input: non-negative integers, each dimension once', () => {
    expect(parsePlane('t=0,c=12')).toEqual({ t: 0, c: 12 });
    expect(refusal(() => parsePlane('t=-1'))).toBe('a plane is written t=N,c=N,z=N with non-negative integers, found "t=-1"');
    expect(refusal(() => parsePlane('c=x'))).toBe('a plane is written t=N,c=N,z=N with non-negative integers, found "c=x"');
    expect(refusal(() => parsePlane('z=1,z=2'))).toBe('a plane gives z twice, found "z=1,z=2"');
  });

  it('resolveOptions fills only what was not given', () => {
    const o = resolveOptions({ workers: 2, format: 'json' });
    expect(o.workers).toBe(2);
    expect(o.format).toBe('json');
    expect(o.out).toBeUndefined();
    expect(o.tileBudget).toBe(500 * 1024);
    expect(resolveOptions({}).workers).toBeGreaterThanOrEqual(1);
  });

  it('makes the default --workers the cores, but no more than --memory-budget carries: one at the least; given, it stands', () => {
    const cores = os.availableParallelism();
    expect(resolveOptions({}).workers).toBe(Math.min(cores, 5));
    expect(resolveOptions({ memoryBudget: '256M' as never }).workers).toBe(1);
    expect(resolveOptions({ memoryBudget: '550M' as never }).workers).toBe(Math.min(cores, 2));
    expect(resolveOptions({ memoryBudget: 1, workers: 3 }).workers).toBe(3);
    // On a machine of many cores: a budget of 1G carries 5 workers (the 16 of 16 cores peaked at 1.6 GiB under it).
    expect([256, 393, 549, 550, 768, 1024, 2048, 4096].map((m) => defaultWorkers(16, m * 2 ** 20))).toEqual([1, 1, 1, 2, 3, 5, 11, 16]);
    for (let w = 1; w <= 64; w++) {
      expect(workersCarried(budgetNeeded(w)), `${w} workers`).toBe(w);
      expect(workersCarried(budgetNeeded(w) - 1), `${w} workers, a byte short`).toBe(w - 1);
    }
  });
});

describe('options given to the library', () => {
  it('refuses a name that is no option, saying which one it may mean', () => {
    expect(() => resolveOptions({ planefield: 'c=c' } as never)).toThrow(new UsageError('unknown option "planefield" (did you mean planeField?)'));
    expect(() => resolveOptions({ 'max-zoom': 3 } as never)).toThrow('unknown option "max-zoom" (did you mean maxZoom?)');
    expect(() => resolveOptions({ colour: 'red' } as never)).toThrow('unknown option "colour"');
    // Names every object has are no options either; a name given no value says nothing.
    expect(() => resolveOptions({ toString: 1 } as never)).toThrow('unknown option "toString"');
    expect(resolveOptions({ maxZoom: 3, extra: undefined } as never).maxZoom).toBe(3);
  });

  it('suggests for a typo as the CLI does, by the same function (README: "naming the option it may mean")', async () => {
    expect(() => resolveOptions({ maxZom: 3 } as never)).toThrow(new UsageError('unknown option "maxZom" (did you mean maxZoom?)'));
    expect(() => resolveBuildConfig({ tileBudegt: '1K' } as never)).toThrow(new UsageError('unknown option "tileBudegt" (did you mean tileBudget?)'));
    await expect(buildPyramid([], { out: 'out', planeFeild: 'c=c' } as never)).rejects.toThrow(new UsageError('unknown option "planeFeild" (did you mean planeField?)'));
    expect(() => parseArgs('build', ['--max-zom', '3'])).toThrow(new UsageError('unknown option --max-zom for build; did you mean --max-zoom?'));
    // A letter or two changed is a typo; a name of other letters is none, and a one-letter name is near nothing.
    expect(() => resolveOptions({ x: 1 } as never)).toThrow(new UsageError('unknown option "x"'));
  });

  it('takes sizes as the CLI does, and says what it found when it cannot', () => {
    expect(resolveOptions({ memoryBudget: '512M' as never, tileBudget: '16K' as never })).toMatchObject({ memoryBudget: 512 * 1024 ** 2, tileBudget: 16 * 1024 });
    expect(() => resolveOptions({ memoryBudget: 'lots' as never })).toThrow('memoryBudget takes a size in bytes (a number, or 1G, 512M, 500K), found "lots"');
  });

  it('takes null for the default (a settings file\'s unset member, a --lod none report\'s budget), and quotes a number given as text', () => {
    expect(resolveOptions({ tileBudget: null, workers: null, extra: null } as never)).toMatchObject({ tileBudget: 500 * 1024 });
    expect(resolveOptions({ workers: null } as never).workers).toBeGreaterThanOrEqual(1);
    expect(() => resolveBuildConfig({ workers: '2' as never })).toThrow(new UsageError('--workers must be a whole number of at least 1, found "2"'));
    expect(() => resolveBuildConfig({ minZoom: '1' as never })).toThrow('--min-zoom must be 0..30, found "1"');
    expect(() => resolveBuildConfig({ workers: 1.5 })).toThrow('--workers must be a whole number of at least 1, found 1.5');
  });
});
