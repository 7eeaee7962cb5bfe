// Position arrays stay arrays of doubles through validation, plane assignment and flattening, once V8 has optimised them.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Run in a process of its own with V8's natives syntax, on the compiled code (test/global-setup.ts builds dist/): polygons
// with fractional positions and points with integer ones, as a slide has them, enough for the functions to be optimised.
const SCRIPT = `
const dist = process.argv[1];
const { assignPlane } = await import(dist + '/stages/assign.js');
const { flatten } = await import(dist + '/tiling/flat.js');
const { validateFeature } = await import(dist + '/validate/feature.js');
const isDouble = new Function('a', 'return %HasDoubleElements(a)');
const rule = { fixed: {}, fields: {} };
const polygon = (i) => JSON.stringify({ type: 'Feature', geometry: { type: 'Polygon', coordinates: [[[i + 0.5, 1.25], [i + 10.5, 1.25], [i + 10.5, 9.75], [i + 0.5, 1.25]]] }, properties: { n: i } });
const point = (i) => JSON.stringify({ type: 'Feature', geometry: { type: 'Point', coordinates: [i, i + 1] }, properties: null });
let boxed = 0, positions = 0;
for (let i = 0; i < 30000; i++) {
  for (const text of [polygon(i), point(i)]) {
    const f = JSON.parse(text);
    validateFeature(f, '');
    assignPlane(f, rule, '');
    flatten(f.geometry);
    if (i >= 29000 && f.geometry.type === 'Polygon') for (const p of f.geometry.coordinates[0]) { positions++; if (!isDouble(p)) boxed++; }
  }
}
process.stdout.write(JSON.stringify({ positions, boxed }));
`;

describe('position arrays', () => {
  it('are not turned into arrays of boxed numbers by the parse stage (the shared-z walk once did it to every one)', () => {
    const dist = fileURLToPath(new URL('../../dist', import.meta.url));
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', SCRIPT, dist], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ positions: 4000, boxed: 0 });
  });
});
