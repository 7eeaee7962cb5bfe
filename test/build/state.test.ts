// The work-directory state of a build: plan.json versioned and checked, shards, fingerprints (unit markers: unit-log.test.ts); every broken state is a WorkStateError (exit 4) that says what is wrong, never a TypeError.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  PLAN_VERSION, checkSamePlan, checkShardsDone, findPlan, fingerprintLines, fingerprintOfLines, loadPlan, markShardDone, resumablePlan, savePlan, spillRoot, workDirFor, type PlanFile,
} from '../../src/build/state.js';
import { UnitLog, type UnitMarker } from '../../src/build/unit-log.js';
import { DiskWorkDir } from '../../src/io/workdir.js';
import { MemoryWorkDir } from '../../src/io/workdir-memory.js';
import { resolveBuildConfig } from '../../src/options.js';
import { EXIT_OUTPUT, EXIT_USAGE, StateUsageError, UsageError, WorkStateError } from '../../src/report/errors.js';
import type { UnitPlan } from '../../src/stages/plan.js';
import type { Multiscale } from '../../src/model/multiscale.js';
import { tmpDir } from '../helpers/pyramid.js';
import { refusal as refuse } from '../helpers/errors.js';

const refusal = (f: () => unknown) => refuse(f, WorkStateError, EXIT_OUTPUT);

const unit = (key: string): UnitPlan => ({ key, level: 0, plane: { t: 0, c: 0, z: 0 }, cell: { z: 1, x: 0, y: 0 }, sources: [key] });

function planFile(units: UnitPlan[], shards = 1): PlanFile {
  return {
    version: PLAN_VERSION, fingerprint: 'f', units, shards, spilled: false, readSeconds: 0, meta: {}, preview: { enabled: false },
    read: { read: 0, valid: 0, invalid: 0, issues: { errorsByCode: {}, warningsByCode: {}, samples: [] }, skipped: {}, bounds: null, extent: [], halfExtent: 0, dims: [], stats: {}, collection: {} },
    plan: {
      world: { side: 256, width: 256, height: 256 }, minZoom: 0, maxZoom: 0, cellSize: 256, dims: [], layers: [], planes: [{ t: 0, c: 0, z: 0 }],
      levels: [{ zoom: 0, topZoom: 0 }], formats: { json: true, pbf: true }, lod: 'auto', tileBudget: 1, collection: {}, thresholds: [[]], raised: [], spareFrom: 0, spareSizes: [8],
    },
  };
}

const marker = (key: string, next: [string, number][] = []): UnitMarker => ({ key, byZoom: {}, largest: null, pointified: [], kept: [], offered: [], needs: [], unspare: -1, coarse: [], notInPbf: 0, next });


const fingerprintOf = (...a: Parameters<typeof fingerprintLines>) => fingerprintOfLines(fingerprintLines(...a));
describe('plan.json', () => {
  it('round-trips a plan of this version', () => {
    const work = new MemoryWorkDir();
    const p = planFile([unit('0/0/0/0/0')]);
    savePlan(work, p);
    expect(loadPlan(work)).toEqual(p);
    expect(findPlan(work)).toEqual(p);
  });

  it('refuses a plan of version 15 (its records wrote each tag key beside its value), and says what another resume differs by', () => {
    // Version 16 writes a record's tag keys together: a step of 16 would misread the records of 15.
    expect(PLAN_VERSION).toBe(16);
    const work = new MemoryWorkDir();
    const p = planFile([unit('0/0/0/0/0')]);
    work.writeJson('plan.json', { ...p, version: 15 });
    expect(refusal(() => loadPlan(work))).toBe(
      'the plan in the work directory has version 15, this mudm-tiles reads version 16: it was written by another version; plan (or build) again without --resume',
    );
    const other = { ...p.plan, levels: [{ zoom: 0, topZoom: 0 }, { zoom: 0, topZoom: 0 }] };
    expect(refuse(() => checkSamePlan(p, other, p.units, work), UsageError, EXIT_USAGE)).toBe(
      '--resume: the inputs read now differ from those of the interrupted build in the work directory; run again without --resume',
    );
    // The --image file written again with its pixel size (same dimensions, so the fingerprint passed): said as it is.
    const micro = { axes: [{ name: 'x', type: 'space', unit: 'micrometer' }, { name: 'y', type: 'space', unit: 'micrometer' }], coordinateTransformations: [{ type: 'scale', scale: [0.25, 0.25] }] } satisfies Multiscale;
    expect(refuse(() => checkSamePlan(p, { ...p.plan, collection: { multiscale: micro } }, p.units, work), UsageError, EXIT_USAGE)).toBe(
      '--resume: the pyramid\'s inputs are the same, but its pixel size is 0.25 × 0.25 micrometer now, none then: the --image file, or an input\'s multiscale, states another since, and the descriptor and JSON tiles carry it (the interrupted build in the work directory); run again without --resume',
    );
    // Another multiscale beside other levels is other inputs (other bytes on stdin): said as before.
    expect(refuse(() => checkSamePlan(p, { ...other, collection: { multiscale: micro } }, p.units, work), UsageError, EXIT_USAGE)).toContain('the inputs read now differ');
  });

  it('a missing plan: findPlan says none, loadPlan refuses and says to run plan', () => {
    const work = new MemoryWorkDir();
    expect(findPlan(work)).toBeUndefined();
    expect(refusal(() => loadPlan(work))).toBe('no readable plan in the work directory: run mudm-tiles plan first');
  });

  it('a plan of another version or with no version is refused, naming both versions', () => {
    const work = new MemoryWorkDir();
    work.writeJson('plan.json', { ...planFile([]), version: 1 });
    expect(refusal(() => loadPlan(work))).toBe(
      `the plan in the work directory has version 1, this mudm-tiles reads version ${PLAN_VERSION}: it was written by another version; plan (or build) again without --resume`,
    );
    work.writeJson('plan.json', { fingerprint: 'f' });
    expect(refusal(() => findPlan(work))).toMatch(/^the plan in the work directory has version null, this mudm-tiles reads version \d+: /);
    work.writeJson('plan.json', 'not a plan');
    expect(refusal(() => loadPlan(work))).toMatch(/has version null/);
  });

  it('an unreadable plan file on disk is a missing plan, named by its directory', () => {
    const root = path.join(tmpDir('mudm-state'), 'w');
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, 'plan.json'), '{"version": 2,');
    expect(refusal(() => loadPlan(new DiskWorkDir(root)))).toBe(`no readable plan in ${root}: run mudm-tiles plan first`);
  });
});

describe('where records spill', () => {
  it('to --tmp-dir when given, for an archive file as for a directory; else into the output\'s work directory', () => {
    const dir = tmpDir('spill-root');
    for (const out of [path.join(dir, 'slide.pmtiles'), path.join(dir, 'out')]) {
      const given = resolveBuildConfig({ out, tmpDir: path.join(dir, 'F') }).options;
      expect(path.dirname(spillRoot(given, workDirFor(given, undefined)))).toBe(path.join(dir, 'F'));
      const o = resolveBuildConfig({ out }).options;
      const work = out.endsWith('.pmtiles') ? path.join(dir, '.slide.pmtiles.mudm-work') : path.join(out, '.mudm-work');
      expect(spillRoot(o, workDirFor(o, undefined))).toBe(path.join(work, 'spill'));
    }
  });
});

describe('shards and fingerprints', () => {
  it('finalize is refused until every shard and unit is done', () => {
    const work = new MemoryWorkDir();
    const units = [unit('0/0/0/0/0'), unit('0/0/0/0/1'), unit('0/0/0/1/0')];
    const p = { ...planFile(units, 2), id: 'plan-a' };
    const parts = new Map<number, Map<string, number>>();
    const check = (plan = p) => checkShardsDone(work, plan, new UnitLog(work), (i) => parts.get(i) ?? new Map());
    expect(refusal(() => check())).toBe('cannot finalize: shard(s) 0, 1 not complete, 3 unit(s) missing; run build-shard for them');
    // Each shard appends to a log of its own; finalize reads them all.
    for (const u of units) new UnitLog(work).write(0, marker(u.key), []);
    markShardDone(work, 0, [units[0], units[2]], p, new Map([['tiles.part', 900]]));
    parts.set(0, new Map([['tiles.part', 900]]));
    expect(refusal(() => check())).toBe('cannot finalize: shard(s) 1 not complete, 0 unit(s) missing; run build-shard for them');
    markShardDone(work, 1, [units[1]], p, new Map([['tiles.part', 700]]));
    // A part a shard wrote, gone since: its tiles would be missing from the archive.
    expect(refusal(() => check())).toBe('cannot finalize: the archive part tiles.part is missing, of shard 1 in the work directory: run build-shard --shard 1 again (it tiles its units anew)');
    // An earlier copy of it (a killed attempt's, which a workflow's merge took): whole, but short of tiles.
    parts.set(1, new Map([['tiles.part', 300]]));
    expect(refusal(() => check())).toBe('cannot finalize: the archive part tiles.part holds 300 bytes, 700 when the shard finished it (cut short, or an earlier or other copy), of shard 1 in the work directory: run build-shard --shard 1 again (it tiles its units anew)');
    parts.set(1, new Map([['tiles.part', 700]]));
    expect(() => check()).not.toThrow();
    // Shards done for another plan (copied in from another build's work directory).
    expect(refusal(() => check({ ...p, id: 'plan-b' }))).toBe('cannot finalize: shard 0 was built for another plan than the one in the work directory (copied in from another build?): its tiles and records are not this plan\'s; start over with plan --force');
  });

  it('finalize started while a shard runs (a workflow that did not wait for it) says to wait for it, not to run it again', () => {
    const root = path.join(tmpDir('mudm-state'), 'w');
    fs.mkdirSync(path.join(root, 'owners'), { recursive: true });
    // Shard 1 on another machine sharing the volume, its record fresh; shard 0 not started.
    fs.writeFileSync(path.join(root, 'owners/shard-1.json'), JSON.stringify({ pid: 4242, host: 'node-b.cluster', start: 's4242' }));
    const work = new DiskWorkDir(root, { pid: 101, start: 's101', alive: () => false });
    const units = [unit('0/0/0/0/0'), unit('0/0/0/0/1'), unit('0/0/0/1/0')];
    const p = { ...planFile(units, 2), id: 'plan-a' };
    const check = () => checkShardsDone(work, p, new UnitLog(work), () => new Map());
    const running = 'shard 1 \\(pid 4242 on node-b\\.cluster, whose record was refreshed \\d s ago; a record no longer refreshed counts as ended 180 s after\\) is still running: run finalize again once it ends';
    expect(refusal(check)).toMatch(new RegExp(`^cannot finalize: shard\\(s\\) 0, 1 not complete, 3 unit\\(s\\) missing; ${running}, and build-shard for the others$`));
    for (const u of [units[0], units[2]]) new UnitLog(work).write(0, marker(u.key), []);
    markShardDone(work, 0, [units[0], units[2]], p, new Map());
    expect(refusal(check)).toMatch(new RegExp(`^cannot finalize: shard\\(s\\) 1 not complete, 1 unit\\(s\\) missing; ${running}$`));
  });

  it('the fingerprint follows the inputs, the output-changing options and the image size however given', () => {
    const inputs = [{ source: { name: 'a.json' }, fingerprint: '10:1' }];
    const base = fingerprintOf(inputs, resolveBuildConfig({ out: 'o' }));
    expect(fingerprintOf(inputs, resolveBuildConfig({ out: 'elsewhere', workers: 7 }))).toBe(base);
    expect(fingerprintOf([{ ...inputs[0], fingerprint: '11:1' }], resolveBuildConfig({ out: 'o' }))).not.toBe(base);
    expect(fingerprintOf(inputs, resolveBuildConfig({ out: 'o', tileBudget: 1 }))).not.toBe(base);
    const sized = fingerprintOf(inputs, resolveBuildConfig({ out: 'o', imageSize: '100,50' }));
    expect(sized).not.toBe(base);
    expect(fingerprintOf(inputs, resolveBuildConfig({ out: 'o', image: 'slide.tif' }, { width: 100, height: 50 }))).toBe(sized);
  });

  it('--resume identifies the --image file by its path, size and time, not its dimensions, and names it when it differs', () => {
    const inputs = [{ source: { name: 'a.json' }, fingerprint: '10:1' }];
    const config = (file: string, identity: string) => ({ ...resolveBuildConfig({ out: 'o', image: file }, { width: 100, height: 50 }), imageFile: { file, identity } });
    const work = new MemoryWorkDir();
    const lines = fingerprintLines(inputs, config('slide.png', '500:1'));
    savePlan(work, { ...planFile([]), fingerprint: fingerprintOfLines(lines), fingerprintLines: lines });
    expect(resumablePlan(work, inputs, config('slide.png', '500:1')).fingerprintLines).toEqual(lines);
    const refused = (c: ReturnType<typeof config>) => refuse(() => resumablePlan(work, inputs, c), StateUsageError, EXIT_USAGE);
    const says = (what: string) => `--resume: the inputs or options differ from those of the interrupted build in the work directory (${what}); run again with the same ones, or start over with --force (without --resume)`;
    // Written again, of the same size (another scan of the slide), or only touched: another file for all the build knows.
    expect(refused(config('slide.png', '500:2'))).toBe(says('--image slide.png has changed since: its size or modification time differs'));
    expect(refused(config('other.png', '500:1'))).toBe(says('--image was slide.png, is other.png now'));
    // A plan written before the image was identified (its dimensions only): refused, saying why, never taken for the same image.
    const before = lines.filter((l) => !l.startsWith('image='));
    savePlan(work, { ...planFile([]), fingerprint: fingerprintOfLines(before), fingerprintLines: before });
    expect(refused(config('slide.png', '500:1'))).toBe(says('--image slide.png was not recorded by the interrupted build (it had none, or an earlier mudm-tiles made it, which recorded the image\'s dimensions only)'));
  });

  it('--resume takes --coarse-fields by the names it gives, however spaced, and names an empty list as typed', () => {
    const inputs = [{ source: { name: 'a.json' }, fingerprint: '10:1' }];
    const work = new MemoryWorkDir();
    const given = (coarseFields: string, fieldsFromZoom?: number) => resolveBuildConfig({ out: 'o', coarseFields, ...(fieldsFromZoom === undefined ? {} : { fieldsFromZoom }) });
    const lines = fingerprintLines(inputs, given('classification.name, objectType'));
    savePlan(work, { ...planFile([]), fingerprint: fingerprintOfLines(lines), fingerprintLines: lines });
    expect(resumablePlan(work, inputs, given('classification.name,objectType ,')).fingerprintLines).toEqual(lines);
    const says = (what: string) => `--resume: the inputs or options differ from those of the interrupted build in the work directory (${what}); run again with the same ones, or start over with --force (without --resume)`;
    const refused = (c: ReturnType<typeof given>) => refuse(() => resumablePlan(work, inputs, c), StateUsageError, EXIT_USAGE);
    expect(refused(given(''))).toBe(says('--coarse-fields was classification.name,objectType, is "" now'));
    expect(refused(given('classification.name,objectType', 4))).toBe(says('--fields-from-zoom was not given, is 4 now'));
  });
});
