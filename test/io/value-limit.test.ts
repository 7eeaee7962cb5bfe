// The reader's limit on one value: a feature, a record or a top-level document larger than it ends the read, named.
import { describe, expect, it } from 'vitest';
import { readEventBatches } from '../../src/io/read.js';
import { ValueTooLargeError } from '../../src/report/errors.js';
import { valueLimit } from '../../src/build/context.js';
import { parseBytes, resolveBuildConfig } from '../../src/options.js';

const limit = { bytes: 1000, why: 'the test limit' };

async function read(text: string): Promise<unknown> {
  const events: unknown[] = [];
  // Small chunks, as a file or a gunzip stream would hand them over.
  const bytes = new TextEncoder().encode(text);
  const chunks = Array.from({ length: Math.ceil(bytes.length / 64) }, (_, i) => bytes.subarray(i * 64, i * 64 + 64));
  const source = { name: 'in.json', open: async function* () { yield* chunks; } };
  for await (const batch of readEventBatches(source, limit)) events.push(...batch);
  return events;
}

const point = (p = '') => `{"type":"Feature","properties":{"p":"${p}"},"geometry":{"type":"Point","coordinates":[1,2]}}`;

describe('the limit of a build', () => {
  it('is a twentieth of --memory-budget, which it names as typed (40M, not 41943040)', () => {
    const limit = valueLimit(resolveBuildConfig({ out: 'out', memoryBudget: parseBytes('40M') }));
    expect(limit).toEqual({ bytes: 2097152, why: 'the most one value may take with --memory-budget 40M (a 20th of it, at least 1M); raise --memory-budget to read it' });
    expect(valueLimit(resolveBuildConfig({ out: 'out', memoryBudget: parseBytes('1.5G') })).why).toContain('--memory-budget 1536M (');
  });
});

describe('a value over the limit', () => {
  it('a feature of a collection: its index, line and column', async () => {
    const err = await read(`{"type":"FeatureCollection","features":[\n${point()},\n  ${point('x'.repeat(2000))}]}`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValueTooLargeError);
    expect((err as Error).message).toBe('in.json:3:3: feature 1 is larger than 1000 bytes, the test limit');
  });

  it('a collection member after the features, and an element of a top-level array (a bomb of "[")', async () => {
    const member = await read(`{"type":"FeatureCollection","features":[${point()}],"properties":{"n":"${'y'.repeat(2000)}"}}`).catch((e: unknown) => e);
    expect((member as Error).message).toMatch(/^in\.json:1:\d+: member "properties" of the top-level object is larger than 1000 bytes/);
    const bomb = await read('['.repeat(5000)).catch((e: unknown) => e);
    expect((bomb as Error).message).toBe('in.json:1:2: feature 0 is larger than 1000 bytes, the test limit');
  });

  it('within the limit, the same events as without one; members parsed when the features streamed', async () => {
    const text = `{"type":"FeatureCollection","name":"a","features":[${point()}],"properties":{"k":1}}`;
    const events = await read(text) as { kind: string; members?: unknown }[];
    expect(events.map((e) => e.kind)).toEqual(['feature', 'members']);
    expect(events[1].members).toEqual({ type: 'FeatureCollection', name: 'a', properties: { k: 1 } });
    expect(await read(point('z'.repeat(500)))).toHaveLength(1);
  });
});
