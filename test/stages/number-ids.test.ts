// Distinct tag values: numbers to ids through the open-addressed table, and the values the size sketch has met.
import { describe, expect, it } from 'vitest';
import { DistinctValues, NumberIds } from '../../src/stages/number-ids.js';

describe('NumberIds', () => {
  it('gives each distinct number the id it was first offered, past many growths of the table', () => {
    const t = new NumberIds(4);
    const numbers = Array.from({ length: 20000 }, (_, i) => (i % 3 === 0 ? i : i % 3 === 1 ? -i / 7 : i * 1e12 + 0.5));
    numbers.forEach((v, i) => expect(t.idOf(v, i)).toBe(i));
    expect(t.size).toBe(20000);
    // Asked again, with other ids offered: the first ones stand.
    expect(numbers.map((v) => t.idOf(v, -5))).toEqual(numbers.map((_, i) => i));
    expect(t.idOf(-0, 99)).toBe(0);
    expect(t.idOf(Number.MAX_VALUE, 7)).toBe(7);
    expect(t.idOf(Number.MIN_VALUE, 8)).toBe(8);
  });

  it('forgets everything on clear, and keeps working after', () => {
    const t = new NumberIds(8);
    for (let i = 0; i < 100; i++) t.idOf(i + 0.5, i);
    t.clear();
    expect(t.size).toBe(0);
    expect(t.idOf(3.5, 0)).toBe(0);
    expect(t.idOf(50.5, 1)).toBe(1);
    expect(t.idOf(3.5, 2)).toBe(0);
  });

  it('keeps its ids right when a large table is kept through one clear and let go at the next', () => {
    const t = new NumberIds(8);
    for (let i = 0; i < 40000; i++) t.idOf(i / 3, i);
    t.clear();
    for (let i = 0; i < 10; i++) expect(t.idOf(i + 0.25, i)).toBe(i);
    t.clear();
    expect(t.size).toBe(0);
    for (let i = 0; i < 3000; i++) expect(t.idOf(-i - 0.5, i)).toBe(i);
    for (let i = 0; i < 3000; i++) expect(t.idOf(-i - 0.5, -1)).toBe(i);
    expect(t.idOf(0.25, 7)).toBe(7);
  });
});

describe('DistinctValues', () => {
  it('says which values are met for the first time, numbers apart from their text, -0 as 0', () => {
    const d = new DistinctValues();
    const met = [1, '1', 1, true, false, true, 'a', 'a', 0, -0, 2.5, 2.5].map((v) => d.first(v));
    expect(met).toEqual([true, true, false, true, true, false, true, false, true, false, true, false]);
  });
});
