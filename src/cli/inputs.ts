// Turns command-line inputs (files, directories, `-`, --input t=0,c=1:FILE, --manifest) into pipeline inputs.
import fs from 'node:fs';
import path from 'node:path';
import { jsonSyntaxError } from '../io/json-errors.js';
import { defaultLayerOf, fileSource, layerNameFor, stdinSource } from '../io/read.js';
import { MASK_FILE, maskSource } from '../io/mask-source.js';
import { statIdentity } from '../io/image.js';
import type { InputSpec } from '../build/context.js';
import { InputError, UsageError } from '../report/errors.js';
import { isArchiveFile, OPTIONS, parsePlane, parsePlaneFields, type Options } from '../options.js';
import type { Dim, Plane } from '../tiling/space.js';
import type { CodedFields } from '../report/coded.js';
import type { CliIO } from './io.js';
import { pathOverlap } from '../io/dirs.js';
import { closest } from '../suggest.js';

/** File names a directory argument contributes: annotation documents, plain or gzipped. */
const DATA_FILE = /\.(json|geojson|ndjson|geojsonl|geojsons|jsonl)(\.gz)?$/i;

function fileInput(file: string, plane?: Partial<Plane>, layer?: string): InputSpec {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    throw new InputError(`cannot read ${file}: no such file`, file);
  }
  // A label mask becomes features on the fly; its layer, as any input's, the file name less extensions unless given.
  if (MASK_FILE.test(file)) {
    return { source: maskSource(file), plane, layer, fingerprint: statIdentity(st) };
  }
  // The build copies each feature's bytes into its batch before reading on: one read buffer serves the whole file.
  return { source: fileSource(file, { reuseChunks: true }), plane, layer, fingerprint: statIdentity(st) };
}

/** What every path argument is expanded with: the CLI's I/O, --layer-per-file, --layer, the output, and the files met so far. */
interface ExpandContext {
  io: CliIO; perFile: boolean; layerOption?: string; out?: string; warn?: (message: string, fields: CodedFields) => void;
  /** The files given so far, by their identity: each time, how it was given and its fixed plane. */
  met: Map<string, { file: string; as: string; plane: Partial<Plane> }[]>;
  /** The inputs whose layer is named after them (a file, a directory: no --layer, no manifest entry's layer), in order. */
  named: Named[];
}

/** An input named as a layer by its file or directory name: `shown` in messages, with its fixed plane. */
interface Named { layer: string; shown: string; plane: Partial<Plane> }

/** Where a path comes from: how the command line gave it (`argument 2`, `--input c=1:a.json`), as written, with its plane and layer. */
interface Given { how: string; shown: string; plane?: Partial<Plane>; layer?: string }

/** Two inputs fixed to other planes (`--input c=0:…`, `c=1:…`): none of their features can meet in a tile. */
function apart(p: Partial<Plane> = {}, q: Partial<Plane> = {}): boolean {
  return (['t', 'c', 'z'] as const).some((d) => p[d] !== undefined && q[d] !== undefined && p[d] !== q[d]);
}

/**
 * One file given twice would be read twice, each of its features twice in the pyramid: refused, naming both ways it
 * was given (`a.json ./a.json`, a link to it, a directory and a file in it). Fixed to another plane it is a copy asked
 * for (one segmentation on every channel); without a fixed plane its features may land on any, the other's too.
 */
function meet(ctx: ExpandContext, file: string, st: fs.Stats, as: string, plane: Partial<Plane> = {}): void {
  // A file's identity, whatever path reaches it (links, hard links, `..`); a system without inode numbers has paths.
  const id = st.ino !== 0 ? `${st.dev}:${st.ino}` : fs.realpathSync(file);
  const earlier = ctx.met.get(id) ?? [];
  const first = earlier.find((e) => !apart(e.plane, plane));
  if (first) throw new UsageError(`${first.file} is given twice, as ${first.as} and as ${as}: each of its features would be read twice and be twice in the pyramid; give it once`);
  ctx.met.set(id, [...earlier, { file, as, plane }]);
}

/**
 * A path argument: a file, or a directory whose data files are taken in name order, into one layer named after the
 * directory (its files are parts of one export, such as per-patch files) unless `perFile`, or a layer given.
 */
function expand(arg: string, ctx: ExpandContext, { how, shown, plane, layer }: Given): InputSpec[] {
  const { io, perFile, layerOption, out, warn } = ctx;
  // Named after itself only when neither a manifest entry nor --layer names its layer.
  const nameLayer = (spec: InputSpec, shown: string): InputSpec => {
    if (layer === undefined && layerOption === undefined) ctx.named.push({ layer: defaultLayerOf(spec.source), shown, plane: plane ?? {} });
    return spec;
  };
  if (arg === '-') return [nameLayer({ source: stdinSource(io.stdin), plane, layer }, 'stdin')];
  const full = path.resolve(io.cwd, arg);
  let st: fs.Stats;
  try {
    st = fs.statSync(full);
  } catch (e) {
    throw new InputError(`cannot read ${arg}: ${whyUnreadable(e)}`, arg);
  }
  const to = out === undefined ? undefined : path.resolve(io.cwd, out);
  // The folder the output's files (descriptor, report) go into: OUT, or an archive's own folder.
  const writesInto = (dir: string) => to !== undefined && (pathOverlap(to, dir) === 'is' || (isArchiveFile(to) && pathOverlap(path.dirname(to), dir) === 'is'));
  // A manifest entry's layer names its file's layer, or a directory's one layer, which --layer-per-file would name by file.
  if (layer !== undefined && perFile) {
    const names = st.isDirectory() ? 'one layer for the directory, --layer-per-file one for each of its files' : `the file's layer, --layer-per-file names it after the file (${layerNameFor(arg)})`;
    throw new UsageError(`the layer ${layer} that ${arg}'s manifest entry names and --layer-per-file conflict: the entry names ${names}: give one of them`);
  }
  if (!st.isDirectory()) {
    if (writesInto(path.dirname(full))) {
      warn?.(`${arg} lies in the folder the output ${out} writes its descriptor and report into: a later build of that folder as an input would read them too; keep inputs apart from outputs`, { event: 'input-beside-output', input: arg, out });
    }
    const name = arg === full ? full : path.relative(io.cwd, full) || full;
    meet(ctx, name, st, `${shown} (${how})`, plane);
    return [nameLayer(fileInput(name, plane, layer), name)];
  }
  // Its data files are read, not its folders: an output there (or an archive's report beside it) would be read by
  // the next build as features.
  if (writesInto(full)) {
    throw new UsageError(`the output ${out} writes into the input directory ${arg}, whose data files a build reads: the next build would read what this one wrote there as input; choose an output outside it (a folder inside it is fine)`);
  }
  const files = dataFilesIn(arg, full, warn);
  // A directory's name is a layer of its own only when --layer does not name one for every input.
  const dirLayer = layer ?? (perFile || layerOption !== undefined ? undefined : layerNameFor(full));
  // Its files share its one layer on purpose: the directory is named once, as one input.
  if (dirLayer !== undefined && layer === undefined) ctx.named.push({ layer: dirLayer, shown: `directory ${arg}`, plane: plane ?? {} });
  return files.map((n) => {
    const name = path.join(arg, n);
    // A link to nothing is no file to read twice: reading it says it cannot be read.
    const file = fs.statSync(path.join(full, n), { throwIfNoEntry: false });
    if (file) meet(ctx, name, file, `${path.join(shown, n)} (${how}, in directory ${shown})`, plane);
    const spec = fileInput(name, plane, dirLayer);
    return dirLayer === undefined ? nameLayer(spec, name) : spec;
  });
}

/**
 * The data files a directory argument gives, in name order, as `build` and `validate` read them: hidden files, images
 * and folders are passed over, each with a warning. Refused (exit 3) when it gives none.
 */
export function dataFilesIn(arg: string, full: string, warn?: ExpandContext['warn']): string[] {
  const names = fs.readdirSync(full).sort();
  // Hidden files are no export's parts (a Mac's copy leaves `._cells.json` of resource data beside each file), nor
  // are folders, whatever their name; a file that cannot be read (a link to nothing) is read all the same, and named.
  const isFolder = (n: string) => fs.statSync(path.join(full, n), { throwIfNoEntry: false })?.isDirectory() === true;
  const named = names.filter((n) => DATA_FILE.test(n));
  const files = named.filter((n) => !n.startsWith('.') && !isFolder(n));
  const holding = foldersHoldingData(full, names.filter((n) => !n.startsWith('.') && isFolder(n)));
  if (holding.length) {
    const shown = holding.slice(0, 3).map(([n, k]) => `${n}: ${k} file(s)`).join(', ');
    warn?.(`directory ${arg}: ${holding.length} sub-folder(s) hold data files, which are not read (${shown}${holding.length > 3 ? ', …' : ''}): a directory gives the files it holds, not its folders' (no recursion); give a folder as an input of its own to read it`, { event: 'folders-not-read', directory: arg, folders: holding.map(([n]) => n) });
  }
  const passed = named.filter((n) => !files.includes(n) && !holding.some(([h]) => h === n));
  if (passed.length) {
    warn?.(`directory ${arg}: ${passed.length} hidden file(s) or folder(s) named like data passed over (${passed.slice(0, 3).join(', ')}${passed.length > 3 ? ', …' : ''}): a directory gives the data files it holds, not hidden ones (such as the ._ files a Mac's copy leaves) or folders`, { event: 'hidden-passed-over', directory: arg, files: passed });
  }
  // Slide images and thumbnails lie beside exports: a label mask is read only when named as an input of its own.
  const images = names.filter((n) => MASK_FILE.test(n));
  if (images.length) {
    warn?.(`directory ${arg}: ${images.length} image file(s) passed over (${images.slice(0, 3).join(', ')}${images.length > 3 ? ', …' : ''}): a directory gives its annotation documents; name a label mask as an input of its own`, { event: 'images-passed-over', directory: arg, files: images });
  }
  if (files.length === 0) {
    const why = images.length ? ` (label masks are read when named as inputs themselves: ${images.slice(0, 3).join(', ')})` : holding.length ? ` (its sub-folders ${holding.slice(0, 3).map(([n]) => n).join(', ')}${holding.length > 3 ? ', …' : ''} hold some: give them as inputs)` : '';
    throw new InputError(`directory ${arg} holds no .json, .geojson or .ndjson files${why}`, arg);
  }
  return files;
}

/**
 * The folders of a directory input that hold data files of their own, each with how many: an export split into
 * folders (per patch, per slide) would otherwise be passed over in silence. Not recursive, as the reading is not.
 */
function foldersHoldingData(dir: string, folders: readonly string[]): [string, number][] {
  return folders.flatMap((n): [string, number][] => {
    let inside: string[];
    try {
      inside = fs.readdirSync(path.join(dir, n));
    } catch {
      return [];
    }
    const k = inside.filter((m) => DATA_FILE.test(m) && !m.startsWith('.')).length;
    return k > 0 ? [[n, k]] : [];
  });
}

/**
 * An input is a layer of its own, named after its file (a directory input: after the directory; --layer-per-file: each
 * of its files after the file) less its folders and data extensions: inputs named alike so (a.json and a.ndjson, two
 * folders' cells.json) share one layer, said once for each such layer, rather than renamed (a layer's id is what a
 * viewer's style is keyed on). Inputs fixed to other planes (ch0/cells.json as c=0, ch1/cells.json as c=1) are one
 * layer over the planes, as asked.
 */
function warnSharedLayers(named: readonly Named[], perFile: boolean, warn: ExpandContext['warn']): void {
  const byLayer = new Map<string, Named[]>();
  for (const n of named) byLayer.set(n.layer, [...(byLayer.get(n.layer) ?? []), n]);
  for (const [layer, group] of byLayer) {
    const mixed = group.filter((i) => group.some((j) => j !== i && !apart(i.plane, j.plane)));
    const shared = [...new Set(mixed.map((i) => i.shown))];
    if (shared.length < 2) continue;
    // A manifest entry's layer is refused with --layer-per-file: there, renaming is the way.
    const why = perFile ? '--layer-per-file names layers after files' : "an input's layer is named after its file, a directory's after the directory";
    const apartBy = perFile ? 'rename one for a layer of its own' : 'rename one, or give each its layer in a --manifest entry ("layer"), for a layer of its own';
    warn?.(`${shared.join(', ')} are all named ${layer} less their folders and data extensions, and their features go into one layer ${layer} (${why}): ${apartBy}; or fix each to a plane of its own (--input c=0:FILE) for one layer ${layer} over those planes`, { event: 'layer-shared', layer, files: shared });
  }
}

interface ManifestEntry { path: string; t?: number; c?: number; z?: number; layer?: string }

/** What an entry may say (README, --manifest); any other key would be passed over, its input put on plane 0. */
const ENTRY_KEYS = ['path', 't', 'c', 'z', 'layer'];
/** Words for the keys that no edit distance finds: a manifest written with `"channel": 1` means c. */
const ENTRY_WORDS: Readonly<Record<string, string>> = { channel: 'c', time: 't', timepoint: 't', frame: 't', slice: 'z', depth: 'z', file: 'path', filename: 'path' };

/** Why a file given could not be read, in words rather than Node's (`ENOENT: no such file or directory, open '…'`). */
function whyUnreadable(e: unknown): string {
  const code = (e as { code?: string } | null)?.code;
  return code === 'ENOENT' ? 'no such file or directory'
    : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
    : code === 'EISDIR' ? 'it is a directory'
    : code === 'ENOTDIR' ? 'a part of its path is a file, not a directory'
    : code === 'ELOOP' ? 'too many symbolic links (a loop?)'
    : e instanceof Error ? e.message : String(e);
}

function readManifest(file: string): ManifestEntry[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read manifest ${file}: ${whyUnreadable(e)}`, file);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    // Where in the manifest, as for any JSON input: its line and column.
    throw jsonSyntaxError(file, text, 1, 1, e);
  }
  const list = Array.isArray(value) ? value : (value as { inputs?: unknown })?.inputs;
  if (!Array.isArray(list)) throw new UsageError(`manifest ${file} must be a JSON array of {"path", "t", "c", "z", "layer"} objects`);
  list.forEach((e: unknown, i) => checkEntry(file, i, e));
  return list as ManifestEntry[];
}

/** Refuses an entry that would be read otherwise than it says: a key of another name, a value of another type. */
function checkEntry(file: string, i: number, e: unknown): asserts e is ManifestEntry {
  const refuse = (why: string) => new UsageError(`manifest ${file}: entry ${i}${why}`);
  if (e === null || typeof e !== 'object' || Array.isArray(e)) throw refuse(` must be an object such as {"path": "cells.json", "c": 1}, found ${JSON.stringify(e)}`);
  for (const key of Object.keys(e)) {
    if (ENTRY_KEYS.includes(key)) continue;
    const near = closest(key, ENTRY_KEYS, ENTRY_WORDS);
    throw refuse(` has an unknown key ${JSON.stringify(key)}${near ? ` (did you mean "${near}"?)` : ''}: an entry takes ${ENTRY_KEYS.join(', ')}`);
  }
  const { path: p, layer } = e as Record<string, unknown>;
  if (p === undefined) throw refuse(' has no "path"');
  if (typeof p !== 'string' || p === '') throw refuse(`: path must be the name of a file or directory (relative to the manifest), found ${JSON.stringify(p)}`);
  for (const d of ['t', 'c', 'z'] as const) {
    const v = (e as Record<string, unknown>)[d];
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 0)) throw refuse(`: ${d} must be a non-negative integer, found ${JSON.stringify(v)}`);
  }
  if (layer !== undefined && (typeof layer !== 'string' || layer === '')) throw refuse(`: layer must be a layer name (a non-empty string), found ${JSON.stringify(layer)}`);
}

/** Every input of a build command, in the order given: positional arguments, then --input, then the manifest. */
export function resolveInputs(args: string[], options: Options, io: CliIO, warn?: ExpandContext['warn']): InputSpec[] {
  const inputs: InputSpec[] = [];
  if (args.filter((a) => a === '-').length > 1) throw new UsageError('- (standard input) can be given only once');
  const ctx: ExpandContext = { io, perFile: options.layerPerFile, layerOption: options.layer, out: options.out, warn, met: new Map(), named: [] };
  args.forEach((a, k) => inputs.push(...expand(a, ctx, { how: `argument ${k + 1}`, shown: a })));
  for (const spec of options.input) {
    const i = spec.indexOf(':');
    if (i < 0) throw new UsageError(`--input expects DIMS:FILE such as t=0,c=1:cells.json, found "${spec}"`);
    if (i === spec.length - 1) throw new UsageError(`--input ${spec} names no file: --input expects DIMS:FILE such as t=0,c=1:cells.json`);
    inputs.push(...expand(spec.slice(i + 1), ctx, { how: `--input ${spec}`, shown: spec.slice(i + 1), plane: parsePlane(spec.slice(0, i)) }));
  }
  if (options.manifest) {
    const file = path.resolve(io.cwd, options.manifest);
    for (const [i, e] of readManifest(file).entries()) {
      // Features without the field keep their input's layer: all the entry's layer would still name.
      if (e.layer !== undefined && options.layerBy !== undefined) throw new UsageError(`manifest ${file}: entry ${i}'s layer ${e.layer} and --layer-by ${options.layerBy} conflict: --layer-by names each feature's layer by its field, and the entry would name only the layer of its features without that field: give one of them`);
      const plane: Partial<Plane> = {};
      for (const d of ['t', 'c', 'z'] as const) if (e[d] !== undefined) plane[d] = e[d];
      inputs.push(...expand(path.resolve(path.dirname(file), e.path), ctx, { how: `manifest ${file} entry ${i}`, shown: e.path, plane, layer: e.layer }));
    }
  }
  if (inputs.length === 0) {
    // A manifest was given: saying that no input was would send the user looking for a typo in the command line.
    if (options.manifest) throw new UsageError(`manifest ${path.resolve(io.cwd, options.manifest)} lists no input (its array is empty), and no other input is given: list the files to build in it, or pass them as arguments`);
    throw new UsageError('no input given: pass files, directories, - for stdin, --input or --manifest');
  }
  // Only a label mask's features are its labels or their pieces: for annotation documents the option changes nothing.
  if (options.maskFeatures !== OPTIONS.maskFeatures.default && !inputs.some((i) => 'features' in i.source)) {
    warn?.(`--mask-features ${options.maskFeatures} says what a label mask's features are, and no input is a label mask (.tif, .tiff, .png): it changes nothing`, { event: 'mask-features-unused', value: options.maskFeatures });
  }
  // With --layer-by an input's layer holds only its features without the field, which layer-by-lacking names.
  if (options.layerBy === undefined) warnSharedLayers(ctx.named, options.layerPerFile, warn);
  refuseFieldOfFixedPlanes(inputs, options.planeField);
  return inputs;
}

/** A plane an input fixes wins over `--plane-field`: when every input fixes that dimension, the field is read for nothing. */
function refuseFieldOfFixedPlanes(inputs: readonly InputSpec[], planeField: string | undefined): void {
  for (const [d, field] of Object.entries(parsePlaneFields(planeField)) as [Dim, string][]) {
    if (!inputs.every((i) => i.plane?.[d] !== undefined)) continue;
    throw new UsageError(`--plane-field ${d}=${field} and the planes given with the inputs conflict: every input fixes ${d} (--input ${d}=N:FILE, a manifest entry's "${d}"), which wins over a field: give one of them`);
  }
}
