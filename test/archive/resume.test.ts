// An archive build killed with SIGKILL in the middle, then run with --resume, ends byte-identical to a clean build.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLOW_OPTS, expectOk, generateCells, killWhen, markerCount, removeTemps, runCli, tempDir } from '../e2e/helpers.js';

let input = '';
let reference = '';

/** Finished level-0 units of the build of `file`: the markers in its work directory beside it. */
function markers(file: string): number {
  return markerCount(file, 0, path.join(path.dirname(file), `.${path.basename(file)}.mudm-work`));
}

function reportWithoutRun(file: string): unknown {
  const { timings: _t, run: _r, ...rest } = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  return rest;
}

beforeAll(async () => {
  const dir = tempDir('archive-resume-in');
  input = path.join(dir, 'cells.json');
  generateCells(input, 30_000);
  reference = path.join(dir, 'reference.pmtiles');
  expectOk(await runCli(['build', input, '-o', reference, '-q', ...SLOW_OPTS]), 'uninterrupted build');
}, 180_000);

afterAll(removeTemps);

describe('--resume of an archive build after SIGKILL', () => {
  it('leaves no archive after the kill, skips the finished units, and gives the same bytes', async () => {
    const dir = tempDir('archive-resume');
    const out = path.join(dir, 'slide.pmtiles');
    await killWhen(['build', input, '-o', out, '-q', ...SLOW_OPTS], () => markers(out) >= 3);
    expect(fs.existsSync(out), 'a killed build has no archive').toBe(false);
    const finished = markers(out);
    // An assembly the kill cut short leaves its temporary in the work directory beside the part (planted here, as the
    // kill may land anywhere); a file of that pattern beside the archive is not the build's, and stays.
    const parts = path.join(dir, '.slide.pmtiles.mudm-work', 'parts', 'build');
    const part = fs.readdirSync(parts).find((n) => n.endsWith('.part'));
    expect(part, 'the part in the work directory').toBeDefined();
    fs.writeFileSync(path.join(parts, `${part}.archive-0badcafe`), 'half an archive');
    // A kill right after a part is made, before its `.made` is written, leaves a part without one: continued as it is.
    fs.rmSync(path.join(parts, `${(part as string).slice(0, -'.part'.length)}.made`));
    const foreign = `${out}.tmp-0badcafe`;
    fs.writeFileSync(foreign, 'a file the build did not write');

    expectOk(await runCli(['build', input, '-o', out, '-q', '--resume', ...SLOW_OPTS]), 'build --resume');
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'slide.build-report.json'), 'utf8')) as { run: { resumed: number } };
    expect(report.run.resumed, 'units skipped because their markers existed').toBeGreaterThanOrEqual(finished);
    expect(fs.readdirSync(dir).sort(), 'the archive and its report; no work directory; the foreign file kept').toEqual(['slide.build-report.json', 'slide.pmtiles', 'slide.pmtiles.tmp-0badcafe']);
    expect(fs.readFileSync(foreign, 'utf8')).toBe('a file the build did not write');
    expect(fs.readFileSync(out).equals(fs.readFileSync(reference)), 'the same bytes as the uninterrupted build').toBe(true);
    expect(reportWithoutRun(path.join(dir, 'slide.build-report.json'))).toEqual(reportWithoutRun(reference.replace(/\.pmtiles$/, '.build-report.json')));
  });

  /** `text` as a regular expression that matches it alone. */
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  it.each([
    // The markers reached the disk, the part's last writes did not (a power loss after units were marked done).
    ['lost records it had flushed', 'lost', (part: string) => fs.truncateSync(part, Math.floor(fs.statSync(part).size / 2)),
      (part: string) => `${escaped(`(archive part ${part} holds `)}\\d+ bytes of whole records, but \\d+ had been written: it was cut short\\)`],
    // Removed since the kill.
    ['has gone missing', 'gone', (part: string) => fs.rmSync(part), (part: string) => escaped(`(${part} is missing)`)],
  ])('a part that %s: the units are tiled again, the bytes whole', async (_, tag, damage, said) => {
    const dir = tempDir(`archive-resume-${tag}`);
    const out = path.join(dir, 'slide.pmtiles');
    await killWhen(['build', input, '-o', out, '-q', ...SLOW_OPTS], () => markers(out) >= 3);
    const parts = path.join(dir, '.slide.pmtiles.mudm-work', 'parts', 'build');
    const part = path.join(parts, fs.readdirSync(parts).find((n) => n.endsWith('.part')) as string);
    damage(part);
    const r = await runCli(['build', input, '-o', out, '--resume', ...SLOW_OPTS]);
    expectOk(r, 'build --resume');
    expect(r.stderr).toMatch(new RegExp(`--resume: the archive parts were damaged ${said(part)}: the \\d+ finished unit\\(s\\) are tiled again`));
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'slide.build-report.json'), 'utf8')) as { run: { resumed: number } };
    expect(report.run.resumed, 'no unit taken for done').toBe(0);
    expect(fs.readFileSync(out).equals(fs.readFileSync(reference)), 'the same bytes as the uninterrupted build').toBe(true);
  });
});
