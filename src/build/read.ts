// Read stage of a build: sources → parse batches for the workers (validate, assign, partition) → unit records in the
// store, and a summary of what was read; the collection members of the inputs are checked and kept here.
import path from 'node:path';
import { ownOr } from '../model/own.js';
import { newIdCounts, type IdCounts } from '../model/descriptor.js';
import type { Properties } from '../model/feature.js';
import { polygonVertices } from '../model/measure.js';
import type { Multiscale } from '../model/multiscale.js';
import type { Vocabularies } from '../model/vocabulary.js';
import { BatchBuilder, Spares, type Batch } from './batches.js';
import { defaultLayerOf, readEventBatches, type MembersEvent, type ReadEvent } from '../io/read.js';
import { FeatureText, type FeatureSource, type MadeOptions } from '../io/source.js';
import { FlatValue } from '../tiling/flat-value.js';
import type { Recurring } from '../raster/strips.js';
import type { BuildConfig } from '../options.js';
import { DataError, InputError, ReadError } from '../report/errors.js';
import { mergeStats } from '../stages/assign.js';
import { NUCLEUS_LAYER } from '../stages/qupath.js';
import type { UnitStore } from '../stages/partition.js';
import { MAX_FIELD_NAMES, parseBatch, type ParseResult, type ParseTask } from '../stages/parse.js';
import type { Dim } from '../tiling/space.js';
import type { TileSketch } from '../stages/thinning.js';
import { isDescriptorObject, notFeatureSource, validateCollectionMembers } from '../validate/index.js';
import { issueText, type Issue } from '../validate/issue.js';
import { checkMembersUtf8, checkRepeated, checkUtf8, replaceLoneSurrogates } from '../validate/values.js';
import { IssueTally, SAMPLES_PER_CODE, sampleLine } from '../validate/tally.js';
import { runOrdered, type Pool } from '../worker/pool.js';
import { outlineBudget, secondsSince, throwIfAborted, valueLimit, type BuildIO, type InputSpec } from './context.js';
import type { ReadSummary } from './state.js';
import { ManyPieces, maskSizeWarning, recurringWarning, scatteredWarning } from './report.js';
import { clearOutlines, OUTLINES_DIR, OutlineFile } from '../io/outline-spill.js';
import { addLacking, checkOptionFields, keptFieldsWarning, warnLacking, type Lacking } from './option-fields.js';
import { choosePixelSize, type IgnoredPixelSize } from './pixel-size.js';

/** Collection members of the first input that has each valid one: what the tiles and descriptor carry. */
type Collection = ReadSummary['collection'];

/**
 * Reads every input in order: each batch of JSON text is parsed, validated and partitioned in a worker (values on
 * this thread), and its unit records go into `store` in batch order (so the store's contents never depend on which
 * worker was faster). With `sketch`, each batch's tile size estimates are added to it (thinning: lod auto), and to
 * `fewSketch` those of tiles with only the `--coarse-fields`. A mask read in bands spills the label outlines it holds
 * past a tenth of the budget to a folder in `spill`.
 */
export async function readInputs(inputs: readonly InputSpec[], config: BuildConfig, pool: Pool, store: UnitStore, io: BuildIO, t0: number, spill: string, sketch?: TileSketch, fewSketch?: TileSketch): Promise<ReadSummary> {
  const { options: o } = config;
  const tally = new IssueTally(SAMPLES_PER_CODE);
  const sum: ReadSummary = {
    read: 0, valid: 0, invalid: 0, issues: tally.counts(), skipped: {}, skippedFirst: {}, bounds: null, extent: [], halfExtent: 0, dims: [], stats: {}, collection: {},
  };
  const dims = new Set<Dim>();
  const knownSide = config.imageSize ? 2 ** Math.ceil(Math.log2(Math.max(config.imageSize.width, config.imageSize.height))) : undefined;
  const seq = { next: 0 };
  const window = o.workers * 2;
  const spares = new Spares(window + 1);
  const fieldsSeen = new Set<string>();
  const keptSeen = new Set<string>();
  /** Fields features had, for a name of --fields none has (ParseResult.fieldNamesRead). */
  const namesRead = new Set<string>();
  /** Per layer: valid features by their input id (see ParseResult.ids). */
  const ids: Record<string, IdCounts> = {};
  let nuclei = 0;
  /** Valid features without the fields that --plane-field and --layer-by name. */
  const lacking: Lacking = { planes: {}, layers: {} };
  const grow = (b: readonly number[]) => {
    const bb = (sum.bounds ??= [Infinity, Infinity, -Infinity, -Infinity]);
    bb[0] = Math.min(bb[0], b[0]); bb[1] = Math.min(bb[1], b[1]);
    bb[2] = Math.max(bb[2], b[2]); bb[3] = Math.max(bb[3], b[3]);
  };
  /** Which input each kept collection member came from, and the inputs whose own member differs from it. */
  const keptFrom = new Map<string, string>();
  const differing = new Map<string, string[]>();
  const ignoredSizes: IgnoredPixelSize[] = [];
  const onMembers = (file: string, { members, replaced, repeated }: MembersEvent) => {
    // Each input's own axes, whichever input's the pyramid keeps: its positions are read as [x, y] all the same.
    refuseAxesYX(members.multiscale as Multiscale | undefined, file);
    for (const m of collectMembers(sum.collection, keptFrom, tally, file, members, o.strict, replaced, repeated)) differing.set(m, [...(differing.get(m) ?? []), file]);
  };

  /** The events of the JSON input being read, for a worker's syntax error to go back to (`readEventBatches`). */
  let reading: { file: string; events: AsyncGenerator<readonly ReadEvent[]> } | undefined;

  async function* batches(): AsyncGenerator<Batch> {
    for (const input of inputs) {
      const file = input.source.name;
      const b = new BatchBuilder({ file, layer: input.layer ?? o.layer ?? defaultLayerOf(input.source), rule: { fixed: input.plane ?? {}, fields: config.planeFields } }, seq, spares);
      let features: AsyncGenerator<FoundFeature[]>;
      const pieces = new ManyPieces();
      // Warned of as the mask's rows are first read: said again once it is read, it would say no more.
      let recurring = false;
      if ('features' in input.source) {
        clearOutlines(spill);
        const outlines = { bytes: outlineBudget(config), open: () => new OutlineFile(path.join(spill, OUTLINES_DIR)) };
        const onRecurring = (r: Recurring, asPieces: boolean) => { recurring = true; io.onWarning?.(...recurringWarning(file, r, asPieces)); };
        features = madeFeatures(input.source, pieces, { maskFeatures: config.maskFeatures, outlines, onRecurring, signal: io.signal });
      } else {
        reading = { file, events: readEventBatches(input.source, valueLimit(config)) };
        features = readFeatures(file, reading.events, onMembers);
      }
      // Features come in groups (a source chunk's worth): one await per group, not per feature.
      for await (const group of features) {
        for (const f of group) {
          if (b.mixes(f.bytes === undefined)) yield b.take();
          if (f.bytes === undefined) b.addValue(f.value, f.index, f.line, f.column, f.found, f.vertices);
          else b.addText(f.bytes, f.index, f.line, f.column, f.strings ?? -1);
          if (b.full) {
            throwIfAborted(io.signal);
            yield b.take();
          }
        }
      }
      if (!b.empty) yield b.take();
      // What a source of features made in memory (a mask) found once read through.
      const made: Partial<FeatureSource> = 'features' in input.source ? input.source : {};
      const members = made.members?.(), ignored = made.pixelSizeIgnored?.(), size = made.imageSize?.(), scattered = made.scattered?.();
      if (members) onMembers(file, { kind: 'members', members });
      if (ignored !== undefined) ignoredSizes.push({ file, stated: ignored });
      if (size) {
        grow([0, 0, size.width, size.height]);
        sum.imageSized = true;
        const image = config.imageSize;
        if (image && (image.width !== size.width || image.height !== size.height)) io.onWarning?.(...maskSizeWarning(file, size, image));
      }
      const many = pieces.warning(file);
      if (many) io.onWarning?.(...many);
      if (scattered && !recurring) io.onWarning?.(...scatteredWarning(file, scattered, made.readAsPieces?.() ?? false));
    }
  }

  // A batch of values goes alone (parsed here, stored before the next is read): the window held the records of up to
  // four classes of a 20,000² px class mask, 120–345 MB each, while the next class was traced.
  await runOrdered(batches(), window, async (b) => {
    const task: ParseTask = {
      kind: 'parse', file: b.file, layer: b.layer, layerBy: o.layerBy, rule: b.rule, cellSize: o.unitSize,
      side: knownSide, image: config.imageSize, seq0: b.seq0, raw: b.raw, sampleCap: SAMPLES_PER_CODE, nucleusFeatures: o.nucleusFeatures,
      sketch: sketch ? { format: sketch.format, few: fewSketch ? config.coarseFields?.keep : undefined } : undefined, json: config.formats.json, fields: config.fields,
    };
    // Values are parsed here: copying them to a worker (structured clone of every position) cost more than the
    // validation and encoding it would move off this thread (1.5x the CPU time on a traced label mask).
    if (!('values' in b.raw)) return pool.parse(task);
    const r = parseBatch(task);
    // Let go of its values (a traced class of millions of positions) now, not while the batches after it are read.
    b.raw = { values: [], meta: b.raw.meta };
    return r;
  }, async (r: ParseResult, b) => {
    if (r.text) spares.give(r.text);
    if (r.syntax) {
      const e = new ReadError(b.file, r.syntax.line, r.syntax.column, `feature ${r.syntax.index}: ${r.syntax.message}`);
      // Back to the reader while it still reads that input: it says so if gzip data behind it is corrupt.
      if (reading?.file === b.file) await reading.events.throw(e);
      throw e;
    }
    sum.read += r.read; sum.valid += r.valid; sum.invalid += r.invalid;
    tally.merge(r.issues);
    for (const [why, n] of Object.entries(r.skipped)) sum.skipped[why] = (sum.skipped[why] ?? 0) + n;
    // Batches arrive in input order: the first place kept for a reason is the input's first.
    for (const [why, at] of Object.entries(r.skippedFirst)) (sum.skippedFirst ??= {})[why] ??= at;
    if (o.strict && r.invalid > 0) {
      const x = r.issues.samples.find((i) => i.severity === 'error');
      throw new DataError(x ? sampleLine(x) : `${b.file}: invalid feature`);
    }
    r.extent.forEach((n, k) => { sum.extent[k] = (sum.extent[k] ?? 0) + n; });
    if (r.bounds) grow(r.bounds);
    for (const name of r.optionFieldsSeen) fieldsSeen.add(name);
    for (const name of r.keptFieldsSeen) keptSeen.add(name);
    for (const name of r.fieldNamesRead) if (namesRead.size < MAX_FIELD_NAMES) namesRead.add(name);
    sum.halfExtent = Math.max(sum.halfExtent, r.halfExtent);
    for (const d of r.dims) dims.add(d);
    addLacking(lacking, r, b.file);
    if (r.everyChannel > 0) sum.everyChannel = (sum.everyChannel ?? 0) + r.everyChannel;
    mergeStats(sum.stats, r.stats);
    for (const [layer, counts] of Object.entries(r.ids)) {
      const n = ownOr(ids, layer, newIdCounts);
      counts.forEach((c, i) => { n[i] += c; });
    }
    nuclei += r.nuclei;
    for (const [key, bytes] of r.units) store.append(key, bytes);
    if (sketch && r.sketch) sketch.merge(r.sketch);
    if (fewSketch && r.fewSketch) fewSketch.merge(r.fewSketch);
    io.onProgress?.({ phase: 'read', file: b.file, features: sum.read, elapsed: secondsSince(t0) });
  }, { of: (b) => ('values' in b.raw ? 1 : 0), max: 0 });
  sum.dims = (['t', 'c', 'z'] as const).filter((d) => dims.has(d));
  // The pyramid has one of each (descriptor, JSON tiles): inputs with another are described by the first's.
  for (const [member, files] of differing) {
    const why = member === 'properties' ? 'JSON tiles head every feature with them' : 'their features are described with another pixel size or terms: build such inputs into pyramids of their own';
    io.onWarning?.(`${files.length} input(s) (${files.slice(0, 3).join(', ')}${files.length > 3 ? ', …' : ''}) have other ${member} than ${keptFrom.get(member)}, and the pyramid keeps ${keptFrom.get(member)}'s for every layer: ${why}`, { event: 'collection-members-differ', member, files: files.length, first: files[0], keptFrom: keptFrom.get(member) });
  }
  choosePixelSize(sum.collection, keptFrom.get('multiscale'), config.imagePixel, ignoredSizes, io);
  const outside = sum.skipped['outside-image'] ?? 0;
  // Most features beyond the image given: coordinates of another resolution than this image's, not stray features.
  if (outside > 0 && outside >= (sum.valid - outside) / 9) {
    io.onWarning?.(`${outside} of ${sum.valid} valid feature(s) lie wholly beyond the image (${config.imageSize?.width} × ${config.imageSize?.height} px, --image or --image-size) and are not placed: are their coordinates in this image's pixels?`, { event: 'outside-image', features: outside, of: sum.valid });
  }
  checkOptionFields(config, sum, fieldsSeen);
  const unkept = sum.valid > 0 ? keptFieldsWarning(config, keptSeen, namesRead) : undefined;
  if (unkept) io.onWarning?.(...unkept);
  for (const [layer, [withId, other, none]] of Object.entries(ids).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const without = other + none;
    if (withId === 0 || without === 0) continue;
    io.onWarning?.(`layer ${layer}: ${withId} feature(s) have an integer id and ${without} do not; those get their input sequence number as PBF id, which may be another feature's id (MVT ids should be unique in a layer): give every feature an id, or none`, { event: 'mixed-ids', layer, withId, without });
  }
  warnLacking(config, lacking, sum.valid, io, ids);
  // The descriptor says per layer whose numbers its PBF ids are: the nuclei's are the build's, as a feature's without one.
  if (nuclei > 0) ownOr(ids, NUCLEUS_LAYER, newIdCounts)[2] += nuclei;
  sum.ids = ids;
  for (const [layer, fields] of Object.entries(sum.stats).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    for (const [field, st] of Object.entries(fields)) {
      // Arrays are strings in PBF tiles (JSON text): beside numbers or booleans they make the field mixed there too.
      const kinds = ([['number', st.number], ['bool', st.bool], ['string', st.string], ['array', st.other]] as const).filter(([, n]) => n > 0);
      const held = kinds.map(([k, n]) => `${n} ${k}(s)`).join(', ');
      const arrays = st.other > 0 ? { arrays: st.other } : {};
      if (kinds.length > 1 && st.bool > 0) {
        // Booleans among numbers or strings (1 and true, "yes" and false): declared a String too.
        io.onWarning?.(`layer ${layer}: field "${field}" holds ${held}: it is declared a String, and PBF tiles keep each value's own type; give it values of one type`, { event: 'mixed-field', layer, field, numbers: st.number, bools: st.bool, strings: st.string, ...arrays });
      } else if (st.number > 0 && st.string + st.other > 0) {
        const example = st.strings.length > 0 && st.strings[0] !== '' ? ` such as ${JSON.stringify(st.strings[0])}` : '';
        const holds = st.other > 0 ? held : `${st.number} number(s) and ${st.string} string(s)${example}`;
        io.onWarning?.(`layer ${layer}: field "${field}" holds ${holds}: it is declared a String, with no range (a viewer cannot colour it on a scale); write missing values as null to keep it a Number`, { event: 'mixed-field', layer, field, numbers: st.number, strings: st.string, ...arrays });
      }
      if (!st.shadowed) continue;
      io.onWarning?.(`layer ${layer}: ${st.shadowed} feature(s) have a property "${field}" beside their own ${field} member; PBF tiles carry the member under that name, so the property is in JSON tiles only: rename the property to keep it in PBF`, { event: 'property-shadowed', layer, field, features: st.shadowed });
    }
  }
  return sum;
}

/**
 * Positions follow the multiscale axes' order (spec 2.2): two or three axes listing y before x make every position
 * [y, x], which the build, reading [x, y], would transpose. Four or five axes (OME's t, c, z, y, x) cannot each be a
 * number of a position of two or three: they say nothing of its order, and are left alone. The members come after
 * the features they describe are read (they may follow them in the file), so it stops here, before any tile.
 */
function refuseAxesYX(m: Multiscale | undefined, file: string | undefined): void {
  const names = Array.isArray(m?.axes) ? m.axes.map((a) => (typeof a?.name === 'string' ? a.name.toLowerCase() : '')) : [];
  const x = names.indexOf('x'), y = names.indexOf('y');
  if (names.length > 3 || x < 0 || y < 0 || y > x) return;
  throw new DataError(`${file ?? 'the input'}: its multiscale axes list y before x (${names.join(', ')}), so its positions are in that order; the build reads x, y first and would transpose the slide: list the axes with x before y, and swap each position's x and y numbers`);
}

/**
 * One feature for a batch: its JSON text (`bytes`), or a value, with where it starts in its file (0: nowhere), and
 * what reading its text found (a value's: a whole-file document's invalid UTF-8).
 */
interface FoundFeature { index: number; line: number; column: number; bytes?: Uint8Array; strings?: number; value?: unknown; found?: Issue[]; vertices?: number }

/** The features of a JSON input's events in order, a chunk's worth at a time; collection members go to `onMembers` as they are met. */
async function* readFeatures(file: string, reading: AsyncIterable<readonly ReadEvent[]>, onMembers: (file: string, ev: MembersEvent) => void): AsyncGenerator<FoundFeature[]> {
  for await (const events of reading) {
    const group: FoundFeature[] = [];
    for (const ev of events) {
      if (ev.kind === 'members') onMembers(file, ev);
      else if (ev.kind === 'feature') group.push(ev);
      else if (ev.kind === 'array') continue; // its elements follow as features
      else if (ev.value !== null && typeof ev.value === 'object' && 'tilejson' in ev.value && isDescriptorObject(ev.value as Record<string, unknown>)) throw new InputError(`${file} is a tileset descriptor, not annotations`, file);
      else {
        const what = notFeatureSource(ev.value);
        if (what) throw new DataError(`${file} is not a feature source: found ${what}; a build reads a FeatureCollection, a Feature or geometry, or a sequence of them (one per line)`);
        const found: Issue[] = [];
        if (ev.replaced) checkUtf8(ev.replaced.text, ev.replaced.bytes, 0, ev.replaced.bytes.length, '', found, ev.value);
        checkRepeated(ev.repeated, '', found);
        group.push({ index: ev.index, line: ev.line, column: ev.column, value: ev.value, found });
      }
    }
    yield group;
  }
}

/** The features of a source that makes them in memory, numbered in order; they have no place in a text of a file. */
async function* madeFeatures(source: FeatureSource, pieces: ManyPieces, options: MadeOptions): AsyncGenerator<FoundFeature[]> {
  let index = 0;
  for await (const made of source.features(options)) {
    yield made.map((f) => {
      if (f instanceof FeatureText) return { index: index++, line: 0, column: 0, bytes: f.bytes, strings: f.strings };
      pieces.see(f);
      return { index: index++, line: 0, column: 0, value: f, vertices: f instanceof FlatValue ? f.positions : polygonVertices(f) };
    });
  }
}

/** JSON text with every object's keys sorted: equal values, whatever order their members were written in. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_, x: unknown) => (x !== null && typeof x === 'object' && !Array.isArray(x)
    ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : x));
}

/** No collection member is left out of `replaceLoneSurrogates`: none is geometry. */
const NO_MEMBERS: ReadonlySet<string> = new Set();

/**
 * Keeps the first input's collection members for the tiles (`keptFrom`: which input each came from), and returns
 * those this input has otherwise. An invalid member (`type` missing) stops a `--strict` build; otherwise it is a
 * warning, as no feature is invalid for it: the features are read, the members left out.
 */
function collectMembers(
  c: Collection, keptFrom: Map<string, string>, tally: IssueTally, file: string, members: Record<string, unknown>, strict: boolean, replaced: MembersEvent['replaced'], repeated: MembersEvent['repeated'],
): string[] {
  const issues = validateCollectionMembers(members);
  checkMembersUtf8(replaced, members, issues);
  checkRepeated(repeated, '', issues);
  for (const is of issues) {
    if (strict && is.severity === 'error') throw new DataError(`${file}: ${issueText(is)}`);
    const left = is.severity === 'error' ? { ...is, severity: 'warning' as const, message: `${is.message}; its features are read, its collection members left out` } : is;
    tally.add(left, { file, feature: null, line: null, column: null });
  }
  if (issues.some((i) => i.severity === 'error')) return [];
  // JSON tiles and the descriptor would write a lone surrogate as its escape: U+FFFD, as the warning says and features get.
  if (issues.some((i) => i.code === 'string-lone-surrogate')) replaceLoneSurrogates(members, NO_MEMBERS);
  const differ: string[] = [];
  const keep = <K extends keyof Collection>(name: K, value: Collection[K]): void => {
    if (c[name] === undefined) { c[name] = value; keptFrom.set(name, file); } else if (canonical(c[name]) !== canonical(value)) differ.push(name);
  };
  if (members.multiscale) keep('multiscale', members.multiscale as Multiscale);
  if (members.properties && typeof members.properties === 'object') keep('properties', members.properties as Properties);
  if (members.vocabularies) keep('vocabularies', members.vocabularies as Vocabularies);
  return differ;
}
