// Every option, declared once (name, type, default, help): the CLI parses and documents from here, the library
// fills defaults from here, and the presets in pipelines/ use the same names. A build's options are then checked
// and typed once (`resolveBuildConfig`); the stages read that config, never option text.
import os from 'node:os';
import { UsageError } from './report/errors.js';
import { defaultWorkers } from './memory.js';
import { closest } from './suggest.js';
import { MAX_WORLD_SIDE, MAX_ZOOM, type Dim, type Plane } from './tiling/space.js';
import type { StatedPixelSize } from './io/pixel-size.js';

export type OptionType = 'boolean' | 'string' | 'integer' | 'bytes' | 'list';

export interface OptionSpec {
  type: OptionType;
  help: string;
  /** What the option means to a command other than those `help` speaks of (extract's -o is a directory). */
  helpFor?: Partial<Record<Command, string>>;
  /**
   * Default value; a function is evaluated when options are resolved, given the others (machine-dependent defaults,
   * and one that follows another option: the workers a memory budget carries).
   */
  default?: unknown;
  short?: string;
  /** Allowed values of a string option. */
  choices?: readonly string[];
  /** The commands that accept it. */
  commands: readonly Command[];
  /** Placeholder for help text. */
  arg?: string;
}

export type Command = 'validate' | 'build' | 'plan' | 'build-shard' | 'finalize' | 'inspect' | 'verify' | 'serve' | 'extract';

const BUILDING: Command[] = ['build', 'plan'];
const TILING: Command[] = ['build', 'build-shard'];

/** The default of --memory-budget: 1 GiB. */
const MEMORY_BUDGET = 1024 ** 3;
/** The default of --workers; `memory.ts` has the figures (as a budget: 10/7 of what the process takes). */
const CARRIED = 'the cores, but no more than --memory-budget carries: about 160 MiB of it per worker, beyond 235 MiB for the process';

export const OPTIONS = {
  out: { type: 'string', short: 'o', arg: 'DIR', help: 'output directory of the pyramid, or FILE.pmtiles: one PMTiles archive of the PBF tiles of one plane', helpFor: { extract: 'the directory to write the pyramid into' }, commands: [...BUILDING, 'extract'] },
  archive: { type: 'string', arg: 'KIND', choices: ['pmtiles'], help: 'write the tiles of -o DIR into archives: pmtiles, one file per plane and format (DIR/tiles-c1-z2.pbf.pmtiles), listed in tileset.json', commands: BUILDING },
  tileCompression: { type: 'string', arg: 'KIND', default: 'auto', choices: ['auto', 'none', 'gzip'], help: 'how archives store their tiles: auto (PBF as encoded, JSON gzipped), none, or gzip (PBF too: a third smaller for about a quarter more build time, as tippecanoe writes them); none and gzip are refused for a directory of tile files (-o DIR without --archive), whose files a web server compresses', commands: BUILDING },
  force: { type: 'boolean', default: false, help: 'replace what earlier builds wrote in the output (their record says what); nothing else is removed', helpFor: { extract: 'replace what an earlier build or extract wrote in OUT (their record says what); nothing else is removed' }, commands: [...BUILDING, 'extract'] },
  strict: { type: 'boolean', default: false, help: 'stop with exit 1 at the first invalid feature, before anything is written', commands: BUILDING },
  workers: {
    type: 'integer', arg: 'N', default: (o: { memoryBudget: number }) => defaultWorkers(os.availableParallelism(), o.memoryBudget),
    help: `worker threads for parsing and tiling (default: ${CARRIED})`,
    helpFor: {
      plan: `worker threads for parsing (default: ${CARRIED})`, 'build-shard': `worker threads for tiling (default: ${CARRIED})`,
      finalize: `worker threads for tiling the coarse zooms (default: ${CARRIED})`,
    },
    commands: [...BUILDING, 'build-shard', 'finalize'],
  },
  layer: { type: 'string', arg: 'NAME', help: 'vector layer id for every input that names none of its own (a --manifest entry\'s layer wins; default: the file name without extensions; stdin: features)', commands: BUILDING },
  layerBy: { type: 'string', arg: 'FIELD', help: 'split layers by a feature member (featureClass) or a property field; dotted names reach into nested objects (classification.name)', commands: BUILDING },
  layerPerFile: { type: 'boolean', default: false, help: 'each file a layer of its own, named after the file less its folders and data extensions: the files of a directory input too, which otherwise make one layer named after the directory (a file input is a layer of its own either way; inputs named alike on one plane share one, with a warning)', commands: BUILDING },
  maskFeatures: { type: 'string', arg: 'KIND', default: 'auto', choices: ['auto', 'label', 'piece'], help: 'the features of a label mask (TIFF, PNG): label, one per label value, all its pieces one MultiPolygon; piece, one per 4-connected piece of each label, for a 0/255 or class mask, or one segmented tile by tile and numbered afresh in each (ids 1, 2, … in raster order of each piece\'s first pixel; properties label, piece: 1, 2, … within its label, area); auto, label unless the mask is seen numbered afresh in each tile (mask-scattered, mask-recurring), then piece', helpFor: { validate: 'count a label mask\'s features as a build given it makes them: label, one per label value, piece, one per 4-connected piece of each label, or auto, as a build decides' }, commands: [...BUILDING, 'validate'] },
  fields: { type: 'string', arg: 'LIST', help: 'the only property fields tiles carry, at every zoom, comma-separated as the descriptor names them (classification.name,measurements); a name keeps the fields under it; "" keeps none (default: every field)', commands: BUILDING },
  coarseFields: { type: 'string', arg: 'LIST', help: 'the only property fields tiles carry below --fields-from-zoom, comma-separated as the descriptor names them (classification.name,id); a name keeps the fields under it (classification: classification.name and .color); "" keeps none. The coarse zooms then draw more features within the tile budget', commands: BUILDING },
  fieldsFromZoom: { type: 'integer', arg: 'Z', help: 'with --coarse-fields: the coarsest zoom whose tiles carry every field (default: one above the finest zoom, so the finest two do)', commands: BUILDING },
  nucleusFeatures: { type: 'boolean', default: false, help: "a QuPath cell's nucleusGeometry becomes a feature of its own, in layer nucleus with parentId the cell's id", commands: BUILDING },
  input: { type: 'list', arg: 'DIMS:FILE', default: [], help: 'an input with a fixed plane, e.g. t=0,c=1:cells.json', commands: BUILDING },
  manifest: { type: 'string', arg: 'FILE', help: 'JSON file listing inputs, their planes and layers: [{"path": "...", "t": 0, "c": 1, "z": 2, "layer": "..."}] (paths relative to it)', commands: BUILDING },
  planeField: { type: 'string', arg: 'DIM=NAME,...', help: 'property fields that hold the plane, e.g. t=frame,c=channel,z=slice (dotted names allowed)', commands: BUILDING },
  imageSize: { type: 'string', arg: 'W,H', help: 'image size in pixels; fixes the world (default: from --image, else the data)', commands: BUILDING },
  image: { type: 'string', arg: 'FILE', help: 'TIFF, PNG or JPEG whose size fixes the world, and whose stated pixel size is the multiscale when no input has one (header only); with --preview, drawn under the quicklooks and copied, downsampled, as the viewer\'s background', commands: BUILDING },
  minZoom: { type: 'integer', arg: 'Z', default: 0, help: 'coarsest zoom', commands: BUILDING },
  maxZoom: { type: 'integer', arg: 'Z', help: 'finest zoom (default: the finest tile spans at most 512 image pixels)', commands: BUILDING },
  format: { type: 'string', arg: 'LIST', help: 'tile formats to write: json, pbf or json,pbf (default: json,pbf; pbf for -o FILE.pmtiles)', helpFor: { inspect: 'the file a tile is decoded from, json or pbf (default: pbf when the tile has one)' }, commands: [...BUILDING, 'inspect'] },
  name: { type: 'string', help: 'descriptor name', commands: BUILDING },
  description: { type: 'string', help: 'descriptor description', commands: BUILDING },
  attribution: { type: 'string', help: 'descriptor attribution', commands: BUILDING },
  version: { type: 'string', arg: 'X.Y.Z', default: '1.0.0', help: 'descriptor (tileset) version: semver, MAJOR.MINOR.PATCH, as TileJSON 3.0.0 requires', commands: BUILDING },
  baseUrl: { type: 'string', arg: 'URL', help: 'base put before the tile paths in descriptors: an absolute http(s) URL without query or fragment, e.g. https://host/slides/a (default: relative URLs)', commands: BUILDING },
  memoryBudget: { type: 'bytes', arg: 'BYTES', default: MEMORY_BUDGET, help: 'peak memory to stay under; work-unit records spill to --tmp-dir beyond a fifth of it (e.g. 1G, 512M)', helpFor: { plan: 'peak memory to stay under while reading: one value (a feature, a whole document) may take a twentieth of it; the records go to the work directory as they are read (e.g. 1G, 512M)', 'build-shard': 'peak memory to stay under: the work units handed to workers hold at most a tenth of it in records at once (a heavier unit goes alone); the records are the plan\'s, on disk (e.g. 1G, 512M)', finalize: 'peak memory to stay under while the coarse zooms are tiled: the work units handed to workers hold at most a tenth of it in records at once (a heavier unit goes alone), and the records they hand up to the levels above spill to OUT/.mudm-work beyond another tenth (e.g. 1G, 512M)' }, commands: [...BUILDING, 'build-shard', 'finalize'] },
  tmpDir: { type: 'string', arg: 'DIR', help: 'where spilled work units go (default: OUT/.mudm-work; .NAME.pmtiles.mudm-work beside -o NAME.pmtiles)', commands: ['build'] },
  tileBudget: { type: 'bytes', arg: 'BYTES', default: 500 * 1024, help: 'largest PBF tile below the finest zoom (JSON without PBF); each zoom is thinned uniformly to fit its densest tile', helpFor: { verify: 'the largest PBF tile (JSON without PBF) below the finest zoom that passes (default: the budget the build held, from its report)' }, commands: [...BUILDING, 'verify'] },
  lod: { type: 'string', default: 'auto', choices: ['auto', 'none'], help: 'coarse-zoom policy: auto (sub-pixel features become points, byte budget) or none', commands: BUILDING },
  unitSize: { type: 'integer', arg: 'PX', default: 2048, help: 'side in pixels of the spatial cells records are stored by, and of a work unit (twice it on a light whole slide, less on dense data); a power of two', commands: BUILDING },
  shards: { type: 'integer', arg: 'N', default: 1, help: 'number of shards the work units are spread over', commands: ['plan'] },
  shard: { type: 'integer', arg: 'I', help: 'shard to build (default: $JOB_COMPLETION_INDEX)', commands: ['build-shard'] },
  resume: { type: 'boolean', default: false, help: 'continue an interrupted build, skipping finished work units', commands: ['build'] },
  preview: { type: 'boolean', default: false, help: 'write a PNG quicklook per plane of every feature (and with --image the image downsampled), listed in the descriptor assets', commands: BUILDING },
  progress: { type: 'string', default: 'auto', choices: ['auto', 'tty', 'json', 'none'], help: 'progress on stderr: auto (tty when stderr is a terminal), json lines, or none', commands: [...TILING, 'plan', 'finalize', 'validate'] },
  quiet: { type: 'boolean', short: 'q', default: false, help: 'print nothing but errors', helpFor: { build: 'print nothing but errors, and how many features the pyramid lost (invalid, not placed)', finalize: 'print nothing but errors, and how many features the pyramid lost (invalid, not placed), as build -q' }, commands: ['validate', 'build', 'plan', 'build-shard', 'finalize', 'extract'] },
  log: { type: 'string', default: 'text', choices: ['text', 'json'], help: 'log format on stderr: text, or json lines for workflow engines', commands: ['validate', 'build', 'plan', 'build-shard', 'finalize', 'extract'] },
  json: { type: 'boolean', default: false, help: 'print the whole report as JSON on stdout', commands: ['validate', 'inspect', 'verify'] },
  port: { type: 'integer', arg: 'N', default: 8080, help: 'port of the viewer server (127.0.0.1)', commands: ['serve'] },
  cors: { type: 'string', arg: 'ORIGIN', help: 'let pages of this origin (https://host[:port], or * for any) read what serve serves (default: no CORS header)', commands: ['serve'] },
  help: { type: 'boolean', short: 'h', default: false, help: 'show help', commands: ['validate', 'build', 'plan', 'build-shard', 'finalize', 'inspect', 'verify', 'serve', 'extract'] },
} as const satisfies Record<string, OptionSpec>;

export type OptionName = keyof typeof OPTIONS;

type ValueOf<S extends OptionSpec> = S['type'] extends 'boolean' ? boolean
  : S['type'] extends 'integer' | 'bytes' ? number
  : S['type'] extends 'list' ? string[]
  : string;

/** Resolved values: options with a default are always present, the others may be undefined. */
export type Options = {
  [K in OptionName]: (typeof OPTIONS)[K] extends { default: unknown } ? ValueOf<(typeof OPTIONS)[K]> : ValueOf<(typeof OPTIONS)[K]> | undefined;
};

/** `maxZoom` → `--max-zoom`. */
export function flagName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Fills every default into a partial set of options (library callers pass only what they change). */
export function resolveOptions(given: Partial<Options>): Options {
  refuseUnknown(given, Object.keys(OPTIONS));
  const out: Record<string, unknown> = {};
  const computed: [string, (o: Options) => unknown][] = [];
  for (const [name, spec] of Object.entries(OPTIONS) as [string, OptionSpec][]) {
    let v = (given as Record<string, unknown>)[name];
    if (spec.type === 'bytes') v = sizeOf(name, v);
    if (v === undefined || v === null) {
      if (typeof spec.default === 'function') computed.push([name, spec.default as (o: Options) => unknown]);
      v = spec.default;
    }
    out[name] = v;
  }
  // Once every other value is known: such a default may follow one of them.
  for (const [name, fill] of computed) out[name] = fill(out as Options);
  refuseConflicts(out as Options);
  return out as Options;
}

/**
 * Two options of which one would be passed over in silence (the build did as if it were not given): which two,
 * given how, and why they do not go together. Held against values, a default being no choice, so that the CLI's
 * options and a library caller's are refused alike, and the CLI's again when it hands them to the library.
 */
const CONFLICTS: readonly ((o: Options) => string | undefined)[] = [
  (o) => o.layer !== undefined && o.layerPerFile ? `--layer ${o.layer} and --layer-per-file conflict: --layer names one layer for every input, --layer-per-file one for each file of a directory` : undefined,
  // Features without the field keep their input's layer: all --layer or --layer-per-file would still name.
  (o) => o.layerBy !== undefined && o.layer !== undefined ? `--layer ${o.layer} and --layer-by ${o.layerBy} conflict: --layer-by names each feature's layer by its field, and --layer would name only the layer of features without that field` : undefined,
  (o) => o.layerBy !== undefined && o.layerPerFile ? `--layer-per-file and --layer-by ${o.layerBy} conflict: --layer-by names each feature's layer by its field, and --layer-per-file would name only the layers of features without that field` : undefined,
  (o) => o.lod === 'none' && o.tileBudget !== OPTIONS.tileBudget.default ? `--lod none and --tile-budget ${o.tileBudget} conflict: --lod none thins no zoom, so it holds no tile to a budget (--lod auto does)` : undefined,
  // With --preview the image is drawn under the quicklooks as well: then the two say different things.
  (o) => o.image !== undefined && o.imageSize !== undefined && !o.preview ? `--image ${o.image} and --image-size ${o.imageSize} conflict: both fix the size of the world, and without --preview the image is read for nothing else` : undefined,
  (o) => o.quiet && (o.progress === 'tty' || o.progress === 'json') ? `--quiet and --progress ${o.progress} conflict: --quiet prints nothing but errors, progress neither` : undefined,
];

function refuseConflicts(o: Options): void {
  for (const conflict of CONFLICTS) {
    const why = conflict(o);
    if (why !== undefined) throw new UsageError(`${why}: give one of them`);
  }
}

/**
 * Refuses a library caller's option that is not one of `names`: misspelt, it would be passed over in silence and the
 * default used. An undefined or null value says nothing (`{ ...options, x: undefined }`, a JSON settings file's unset
 * member, a `--lod none` report's null budget): only a name given a value is checked.
 */
export function refuseUnknown(given: object, names: readonly string[]): void {
  for (const [name, value] of Object.entries(given)) {
    if (names.includes(name) || value === undefined || value === null) continue;
    const like = closest(name, names);
    throw new UsageError(`unknown option ${JSON.stringify(name)}${like ? ` (did you mean ${like}?)` : ''}`);
  }
}

/** A size option as the CLI takes it ('512M') from a library caller too; other values as they are. */
export function sizeOf(name: string, v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const bytes = parseBytes(v);
  if (bytes === undefined) throw new UsageError(`${name} takes a size in bytes (a number, or 1G, 512M, 500K), found ${JSON.stringify(v)}`);
  return bytes;
}

/** A value as an error message shows it: a string quoted (`"2"` given for a number is then told from `2`). */
export const shown = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/** A size as an option is written: `1G`, `512M`, `500K`, else bytes (`parseBytes` reads it back). */
export function bytesText(n: number): string {
  for (const [unit, size] of [['T', 1024 ** 4], ['G', 1024 ** 3], ['M', 1024 ** 2], ['K', 1024]] as const) {
    if (n >= size && n % size === 0) return `${n / size}${unit}`;
  }
  return String(n);
}

/** Parses `1G`, `512M`, `500K`, `1024` (binary units). */
export function parseBytes(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = (m[2] ?? 'B')[0].toUpperCase();
  const mult = { B: 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }[unit] ?? 1;
  return Math.round(Number(m[1]) * mult);
}

// ---- a build's options, checked and typed once -------------------------------------------------------------

export interface Formats { json: boolean; pbf: boolean }
export interface ImageSize { width: number; height: number }
/**
 * Where tiles go: a directory tree (`none`), one PMTiles archive (`file`: `-o FILE.pmtiles`, PBF tiles of one
 * plane), or one archive per plane and format under a directory (`planes`: `-o DIR --archive pmtiles`).
 */
export type ArchiveMode = 'none' | 'file' | 'planes';

/** `-o FILE.pmtiles` names one archive; any other output is a directory. */
export function isArchiveFile(out: string | undefined): boolean {
  return out !== undefined && /\.pmtiles$/i.test(out);
}

/** The options of a build with every default filled, every range checked, and the option text turned into values. */
export interface BuildConfig {
  options: Options;
  formats: Formats;
  /** The image the world covers: `--image-size`, else the `--image` header, else unknown (the data decide). */
  imageSize?: ImageSize;
  /** Property fields holding plane values (`--plane-field`). */
  planeFields: Partial<Record<Dim, string>>;
  lod: 'auto' | 'none';
  archive: ArchiveMode;
  /** How archives store their tiles (`--tile-compression`); `auto` for a directory output. */
  tileCompression: TileCompression;
  /** What the `--image` file states of its pixel's size, read by the build (this module does no I/O). */
  imagePixel?: ImagePixel;
  /**
   * The `--image` file as a --resume identifies it, as it does an input: its path as given, and its size and
   * modification time (`identity`, unknown when it cannot be read), set by the build (this module does no I/O).
   */
  imageFile?: { file: string; identity?: string };
  /** `--mask-features`: what a label mask's features are. */
  maskFeatures: MaskFeatures;
  /** `--fields`: the only fields tiles carry (unset: every field). */
  fields?: string[];
  /** `--coarse-fields`: the only fields tiles carry below zoom `from` (`--fields-from-zoom`; unset: the plan's finest zoom less one). */
  coarseFields?: { keep: string[]; from?: number };
}

/**
 * `--mask-features`: one feature per label value (`label`), per 4-connected piece of each (`piece`), or `auto`: per
 * label unless the mask is seen numbered afresh in each tile of its segmentation, then per piece.
 */
export type MaskFeatures = 'auto' | 'label' | 'piece';

/** The `--image` file, and what it states of its pixel's size (`StatedPixelSize`). */
export interface ImagePixel extends StatedPixelSize { file: string }

/** `--tile-compression`: `auto` stores PBF tiles as encoded and gzips JSON tiles (README *Archives* has the measurements). */
export type TileCompression = 'auto' | 'none' | 'gzip';

/**
 * Checks and types the options of a build. `header` is the size read from the `--image` header, when the caller read
 * one (this module does no I/O); `--image-size` wins over it. Throws a UsageError naming the option and the value.
 */
export function resolveBuildConfig(given: Partial<Options>, header?: ImageSize): BuildConfig {
  const options = resolveOptions(given);
  const o = options;
  const check = (cond: boolean, message: string): void => {
    if (!cond) throw new UsageError(message);
  };
  // An option of choices takes those it declares (OPTIONS), named in the refusal: `auto, label or piece`.
  const checkChoice = (name: 'lod' | 'tileCompression' | 'maskFeatures', verb: 'must be' | 'takes'): void => {
    const choices: readonly string[] = OPTIONS[name].choices;
    check(choices.includes(o[name]), `--${flagName(name)} ${verb} ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}, found ${shown(o[name])}`);
  };
  const archive: ArchiveMode = isArchiveFile(o.out) ? 'file' : o.archive === 'pmtiles' ? 'planes' : 'none';
  check(o.archive === undefined || o.archive === 'pmtiles', `--archive takes pmtiles, found "${o.archive}"`);
  // A directory named like an archive would pass for one, to readers and to people.
  check(!/\.pmtiles[\\/]+$/i.test(o.out ?? ''), `-o ${o.out} names a directory ending in .pmtiles: one archive is -o ${(o.out ?? '').replace(/[\\/]+$/, '')}; a directory needs another name`);
  // A name ending in .pmtiles is one archive; --archive asks for a directory of them: the two do not go together.
  check(archive !== 'file' || o.archive === undefined, `-o ${o.out} is one PMTiles archive already; --archive pmtiles writes one archive per plane and format under a directory: drop --archive, or give -o a directory name`);
  options.format = o.format ?? (archive === 'file' ? 'pbf' : 'json,pbf');
  const formats = parseFormats(options.format);
  // One archive holds one tile type: the PBF pyramid, what map clients read; JSON tiles go into archives per format.
  check(archive !== 'file' || !formats.json,
    `-o ${o.out} writes one PMTiles archive of PBF tiles; for --format ${o.format} write one archive per plane and format with -o DIR --archive pmtiles`);
  check(Number.isInteger(o.workers) && o.workers >= 1, `--workers must be a whole number of at least 1, found ${shown(o.workers)}`);
  check(Number.isInteger(o.unitSize) && o.unitSize >= 256 && Number.isInteger(Math.log2(o.unitSize)), `--unit-size must be a power of two of at least 256, found ${shown(o.unitSize)}`);
  check(Number.isInteger(o.minZoom) && o.minZoom >= 0 && o.minZoom <= MAX_ZOOM, `--min-zoom must be 0..${MAX_ZOOM}, found ${shown(o.minZoom)}`);
  check(o.maxZoom === undefined || (Number.isInteger(o.maxZoom) && o.maxZoom >= o.minZoom && o.maxZoom <= MAX_ZOOM), `--max-zoom must be ${o.minZoom}..${MAX_ZOOM} (at least --min-zoom), found ${shown(o.maxZoom)}`);
  // Spec: tile 0/0/0 of the JSON pyramid may be its overview descriptor, and is here; the features need a finer zoom.
  check(!formats.json || o.maxZoom !== 0, `--max-zoom 0 leaves JSON tiles no zoom for features: the zoom-0 JSON tile is the overview descriptor (0/0/0.json); give --max-zoom 1 or more, or --format pbf`);
  check(Number.isInteger(o.shards) && o.shards >= 1, `--shards must be a whole number of at least 1, found ${shown(o.shards)}`);
  check(!(o.resume && o.force), '--resume continues the build in OUT and --force starts over, removing it: give one of them');
  check(o.tileBudget > 0, `--tile-budget must be positive, found ${shown(o.tileBudget)}`);
  check(o.memoryBudget > 0, `--memory-budget must be positive, found ${shown(o.memoryBudget)}`);
  checkChoice('lod', 'must be');
  check(o.layer !== '', '--layer must be a layer name (a non-empty string), found ""');
  check(!o.preview || archive !== 'file', `--preview writes PNG files beside the tiles, which -o ${o.out} (one archive) has no place for: write -o DIR --archive pmtiles`);
  checkChoice('tileCompression', 'takes');
  checkChoice('maskFeatures', 'takes');
  checkVersion(o.version);
  if (o.baseUrl !== undefined) checkBaseUrl(o.baseUrl);
  // A directory's tiles are files served as they are: compressing them is the web server's part.
  check(o.tileCompression === 'auto' || archive !== 'none', `--tile-compression ${o.tileCompression} is how archives store their tiles; ${o.out === undefined ? 'this build writes no archive' : `-o ${o.out} is a directory of tile files`}: write -o FILE.pmtiles or add --archive pmtiles, or drop --tile-compression`);
  check(o.fieldsFromZoom === undefined || o.coarseFields !== undefined, `--fields-from-zoom ${o.fieldsFromZoom} says from which zoom tiles carry every field, which they do at all zooms without --coarse-fields: give --coarse-fields LIST too, or drop it`);
  check(o.fieldsFromZoom === undefined || (Number.isInteger(o.fieldsFromZoom) && o.fieldsFromZoom >= o.minZoom && o.fieldsFromZoom <= (o.maxZoom ?? MAX_ZOOM)),
    `--fields-from-zoom must be ${o.minZoom}..${o.maxZoom ?? MAX_ZOOM} (from --min-zoom to --max-zoom), found ${shown(o.fieldsFromZoom)}`);
  const imageSize = o.imageSize !== undefined ? parseImageSize(o.imageSize) : header;
  const coarseFields = o.coarseFields === undefined ? undefined : { keep: parseFieldList(o.coarseFields), ...(o.fieldsFromZoom !== undefined ? { from: o.fieldsFromZoom } : {}) };
  return {
    options, formats, imageSize, planeFields: parsePlaneFields(o.planeField), lod: o.lod as 'auto' | 'none', archive,
    tileCompression: o.tileCompression as TileCompression, maskFeatures: o.maskFeatures as MaskFeatures, coarseFields,
    ...(o.fields !== undefined ? { fields: parseFieldList(o.fields) } : {}),
  };
}

/** semver.org's grammar: MAJOR.MINOR.PATCH, numbers without leading zeros, then an optional pre-release and build. */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?$/;

/** TileJSON 3.0.0: `version` is "a semver.org style version number" (clients compare them to tell caches apart). */
function checkVersion(version: string): void {
  if (SEMVER.test(version)) return;
  const padded = /^\d+(\.\d+)?$/.test(version) ? ` (${version}${version.includes('.') ? '.0' : '.0.0'}?)` : '';
  throw new UsageError(`--version must be a semver version, MAJOR.MINOR.PATCH such as 1.2.0, as TileJSON 3.0.0 requires${padded}; found ${JSON.stringify(version)}`);
}

/**
 * `--base-url` is put before the tile paths as given: it must be a URL a map client fetches from (http or https, with
 * a host), and end where they begin: a query or fragment would come before them. A relative base is left to the
 * default, tile paths relative to tileset.json, which verify holds the layout to.
 */
function checkBaseUrl(base: string): void {
  let url: URL | undefined;
  try {
    url = new URL(base);
  } catch {
    // Refused below: not a URL.
  }
  // As written, not as parsed: the base goes into tileset.json as given (`https:///a` parses, to host a).
  const absolute = url !== undefined && url.hostname !== '' && /^https?:\/\/[^/?#\s]+[^\s]*$/i.test(base);
  if (!absolute) throw new UsageError(`--base-url must be an absolute http or https URL such as https://host/slides/a (without it, tile paths are relative to tileset.json); found ${JSON.stringify(base)}`);
  if (url?.search || url?.hash || /[?#]/.test(base)) throw new UsageError(`--base-url ${base} has a query or fragment, which would come before the tile paths put after it; give the base alone`);
}

/** `json`, `pbf` or `json,pbf` → which formats to write. */
export function parseFormats(text: string): Formats {
  const formats = { json: false, pbf: false };
  for (const f of text.split(',')) {
    const name = f.trim();
    if (name !== 'json' && name !== 'pbf') throw new UsageError(`--format takes json, pbf or json,pbf, found "${f}"`);
    formats[name] = true;
  }
  return formats;
}

/** `classification.name, id` → the names (`--fields`, `--coarse-fields`; "" keeps none); blanks between commas are left out. */
export function parseFieldList(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** `2000,1500` or `2000x1500` → { width: 2000, height: 1500 }. */
export function parseImageSize(text: string): ImageSize {
  const m = /^(\d+)\s*[,x]\s*(\d+)$/.exec(text.trim());
  const width = Number(m?.[1]), height = Number(m?.[2]);
  if (!m || !(width >= 1 && height >= 1 && Number.isSafeInteger(width) && Number.isSafeInteger(height))) {
    throw new UsageError(`--image-size must be W,H in whole pixels of at least 1, found "${text}"`);
  }
  if (width > MAX_WORLD_SIDE || height > MAX_WORLD_SIDE) {
    throw new UsageError(`--image-size must be at most ${MAX_WORLD_SIDE} pixels a side (tiles of 512 px at zoom 30), found "${text}"`);
  }
  return { width, height };
}

/** `t=frame,c=channel` → { t: 'frame', c: 'channel' }; nothing → {}. */
export function parsePlaneFields(text: string | undefined): Partial<Record<Dim, string>> {
  const out: Partial<Record<Dim, string>> = {};
  if (!text) return out;
  for (const part of text.split(',')) {
    const m = /^([tcz])=(.+)$/.exec(part.trim());
    if (!m) throw new UsageError(`--plane-field expects t=NAME,c=NAME,z=NAME, found "${part}"`);
    if (out[m[1] as Dim] !== undefined) throw new UsageError(`--plane-field names ${m[1]} twice, found "${text}"`);
    out[m[1] as Dim] = m[2];
  }
  return out;
}

/** `t=0,c=1` → { t: 0, c: 1 } (the plane of an `--input DIMS:FILE`). */
export function parsePlane(text: string): Partial<Plane> {
  const out: Partial<Plane> = {};
  for (const part of text.split(',')) {
    const m = /^([tcz])=(\d+)$/.exec(part.trim());
    if (!m || !Number.isSafeInteger(Number(m[2]))) throw new UsageError(`a plane is written t=N,c=N,z=N with non-negative integers, found "${part}"`);
    if (out[m[1] as Dim] !== undefined) throw new UsageError(`a plane gives ${m[1]} twice, found "${text}"`);
    out[m[1] as Dim] = Number(m[2]);
  }
  return out;
}
