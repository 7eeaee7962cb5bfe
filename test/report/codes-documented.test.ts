// Every code a warning or notice is logged under (its JSON `event`, the end of its text line) is listed in the README.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Events of a command's own result and progress, which carry no code in text (README *Warnings and notices*). */
const RESULTS = new Set(['done', 'extracted', 'planned', 'planned-already', 'progress', 'shard-done']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('warning and notice codes', () => {
  it('each event the code logs is named in the README, in *Warnings and notices* or the rules it points to', () => {
    const events = new Set<string>();
    for (const file of sources('src')) for (const m of readFileSync(file, 'utf8').matchAll(/event: '([a-z0-9-]+)'/g)) events.add(m[1]);
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('### Warnings and notices'), readme.indexOf('### What `verify` reports'));
    expect(section.length).toBeGreaterThan(1000);
    const undocumented = [...events].filter((e) => !RESULTS.has(e) && !section.includes(`\`${e}\``)).sort();
    expect(undocumented).toEqual([]);
    // The list holds every event but results: more than a handful, so the pattern still finds them.
    expect(events.size).toBeGreaterThan(30);
  });
});
