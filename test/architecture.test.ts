// The house rules a reader relies on, checked over src/: no import cycle (type-only imports count), arrows pointing
// down (nothing imports the build or the CLI), no file over about 400 lines, a line on what each file is for, and no
// module-level mutable state in the pure stages.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
const MAX_LINES = 400;

function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [path.relative(SRC, full).split(path.sep).join('/')] : [];
  });
}

/** The src files a file imports or re-exports from (relative specifiers only; `.js` names the `.ts` source). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(SRC, file), 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+'(\.[^']+)'|^\s*import\s+'(\.[^']+)'/gm)) {
    const spec = m[1] ?? m[2];
    out.add(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts'));
  }
  return [...out];
}

/** Every cycle of the import graph, each named by its sorted members joined by ' > ' (one name per strongly connected set). */
function cycles(graph: Map<string, string[]>): string[] {
  // Tarjan's strongly connected components; a component of two or more files (or a file importing itself) is a cycle.
  let index = 0;
  const idx = new Map<string, number>(), low = new Map<string, number>(), stack: string[] = [], on = new Set<string>();
  const found: string[] = [];
  const visit = (v: string): void => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v) as number, low.get(w) as number)); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) !== idx.get(v)) return;
    const members: string[] = [];
    for (let w = stack.pop() as string; ; w = stack.pop() as string) { on.delete(w); members.push(w); if (w === v) break; }
    if (members.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(members.sort().join(' > '));
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found.sort();
}

describe('the shape of src/', () => {
  const files = sourceFiles();
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it('reads its imports (the check sees the graph)', () => {
    expect(graph.get('build/pipeline.ts')).toContain('build/levels.ts');
    expect(graph.get('index.ts')).toContain('build/pipeline.ts');
    for (const [f, deps] of graph) for (const d of deps) expect(files, `${f} imports ${d}`).toContain(d);
  });

  it('finds a cycle when there is one', () => {
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual(['a > b > c']);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('points its arrows down: library → build → CLI, never back', () => {
    const rank = (f: string) => (f.startsWith('cli/') || f === 'index.ts' ? 2 : f.startsWith('build/') ? 1 : 0);
    expect([...graph].flatMap(([f, deps]) => deps.filter((d) => rank(d) > rank(f)).map((d) => `${f} → ${d}`))).toEqual([]);
  });

  it(`has no file over ${MAX_LINES} lines`, () => {
    const lines = (f: string) => fs.readFileSync(path.join(SRC, f), 'utf8').split('\n').length - 1;
    expect(files.filter((f) => lines(f) > MAX_LINES).map((f) => `${f}: ${lines(f)}`)).toEqual([]);
  });

  it('opens every file with a comment line saying what it is for', () => {
    expect(files.filter((f) => !fs.readFileSync(path.join(SRC, f), 'utf8').startsWith('// '))).toEqual([]);
  });

  it('keeps no module-level mutable state in the pure stages (scratch belongs to an object that owns it)', () => {
    const pure = files.filter((f) => /^(stages|tiling|model|validate|raster)\//.test(f));
    // A top-level `let`/`var`, or a `const` made with `new` that is neither a constant table (UPPER_CASE, filled once),
    // a read-only view, nor a stateless text codec, is state shared by every call of the module.
    const offending = pure.flatMap((f) => fs.readFileSync(path.join(SRC, f), 'utf8').split('\n').flatMap((line, i) => {
      if (/^(export )?(let|var) /.test(line)) return [`${f}:${i + 1}: ${line}`];
      const made = /^(export )?const ([A-Za-z_$][\w$]*)(: ([^=]+))? = new (\w+)/.exec(line);
      if (!made) return [];
      const [, , name, , type = '', ctor] = made;
      const allowed = /^[A-Z][A-Z0-9_]*$/.test(name) || /^Readonly/.test(type.trim()) || /^Text(En|De)coder$/.test(ctor);
      return allowed ? [] : [`${f}:${i + 1}: ${line}`];
    }));
    expect(offending).toEqual([]);
    expect(pure.length).toBeGreaterThan(20);
  });
});
