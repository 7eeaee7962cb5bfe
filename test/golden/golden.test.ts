// Golden cases: each folder here holds input.*, options.json and expected/, the pyramid the CLI writes, decoded.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectOk, runCli } from '../e2e/helpers.js';
import { tmpDir } from '../helpers/pyramid.js';
import { GOLDEN, UPDATE, decodeTree, flags, readTextTree, writeTree } from './decode.js';

const CASES = fs.readdirSync(GOLDEN, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
const scratch = tmpDir('golden');
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('golden cases (UPDATE_GOLDEN=1 rewrites expected/ after an intended change)', () => {
  it('has cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(4);
  });

  for (const name of CASES) {
    it(name, async () => {
      const dir = path.join(GOLDEN, name);
      const inputs = fs.readdirSync(dir).filter((f) => f.startsWith('input.')).sort();
      expect(inputs.length, `${name}: no input.* file`).toBeGreaterThan(0);
      const options = JSON.parse(fs.readFileSync(path.join(dir, 'options.json'), 'utf8')) as Record<string, string | number | boolean>;
      const out = path.join(scratch, name);
      // Inputs are named relative to the case folder, so file names in the report do not depend on where the repository is.
      expectOk(await runCli(['build', ...inputs, '-o', out, '--force', '--quiet', ...flags(options)], { cwd: dir }), name);
      const actual = decodeTree(out);
      const expectedDir = path.join(dir, 'expected');
      if (UPDATE) writeTree(expectedDir, actual);
      const expected = readTextTree(expectedDir);
      expect(expected.size, `${name}: no expected/ yet; run UPDATE_GOLDEN=1 npx vitest run test/golden`).toBeGreaterThan(0);
      expect([...actual.keys()], `${name}: the files written`).toEqual([...expected.keys()]);
      for (const [rel, text] of expected) expect(actual.get(rel), `${name}/expected/${rel}`).toBe(text);
    });
  }
});
