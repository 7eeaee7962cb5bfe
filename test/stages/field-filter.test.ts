// FieldFilter: which tags and JSON members coarse zooms keep under --coarse-fields.
import { describe, expect, it } from 'vitest';
import { FieldFilter } from '../../src/stages/field-filter.js';
import { featureHeadText } from '../../src/stages/encode-json.js';
import { featureTags } from '../../src/tiling/flat.js';

const head = {
  id: 'a1b2', featureClass: 'cell', parentId: 7,
  properties: { classification: { name: 'Tumor', color: [200, 0, 0] }, 'class.x': 1, class: 'c', measurements: { 'Cell: Area': 12.5, Nucleus: { Area: 3 } } },
  vocabularies: { class: { terms: {} }, measurements: { terms: {} } },
};

describe('FieldFilter', () => {
  it('keeps a field by its name or a name above it, never by a name it merely starts with', () => {
    const f = new FieldFilter(['classification', 'measurements.Nucleus', 'class']);
    expect(['classification.name', 'classification.color', 'measurements.Nucleus.Area', 'class', 'class.x'].every((n) => f.keeps(n))).toBe(true);
    expect(['classificationX', 'measurements.Cell: Area', 'measurements', 'measurements.NucleusArea', 'cla', 'id'].some((n) => f.keeps(n))).toBe(false);
  });

  it('filters tags, sharing one kept key list among features of one list', () => {
    const f = new FieldFilter(['classification.name', 'parentId']);
    const t = featureTags(head);
    expect(t.keys).toContain('id');
    const kept = f.tags(t);
    expect(kept).toEqual({ id: null, keys: ['parentId', 'classification.name'], values: [7, 'Tumor'] });
    // A second feature of the same key list (as record reads share them) gets the same kept list, its own values.
    const other = f.tags({ id: 3, keys: t.keys, values: t.values.map((v) => (v === 'Tumor' ? 'Stroma' : v)) });
    expect(other.keys).toBe(kept.keys);
    expect(other).toMatchObject({ id: 3, values: [7, 'Stroma'] });
  });

  it('filters JSON members: nested properties kept by dotted names, a string id only when named, a PBF id always', () => {
    const f = new FieldFilter(['classification.name', 'measurements.Nucleus']);
    expect(f.head(head)).toEqual({ properties: { classification: { name: 'Tumor' }, measurements: { Nucleus: { Area: 3 } } }, vocabularies: { measurements: { terms: {} } } });
    expect(f.head({ ...head, id: 12 }).id).toBe(12);
    expect(new FieldFilter(['id', 'featureClass']).head(head)).toEqual({ id: 'a1b2', featureClass: 'cell', properties: {} });
    // A member named with a dot is the field of that name, as forEachField names it.
    expect(new FieldFilter(['class.x']).head(head).properties).toEqual({ 'class.x': 1 });
    expect(new FieldFilter([]).head({ properties: null })).toEqual({ properties: null });
  });

  it('filters a stored JSON head as it filters the feature it was made from', () => {
    const f = new FieldFilter(['classification', 'parentId']);
    const stored = new TextEncoder().encode(featureHeadText(head, 'cells'));
    expect(f.headText(stored)).toBe(featureHeadText(f.head(head), 'cells'));
    expect(f.headText(stored)).toBe('{"type":"Feature","parentId":7,"layer":"cells","properties":{"classification":{"name":"Tumor","color":[200,0,0]}},"geometry":');
  });

  it('keeps a property named __proto__ as data, and a vocabulary only for a property the feature keeps as its own', () => {
    // JSON.parse makes `__proto__` an own member, as the input had it; `toString` is no property of `{}`.
    const f = JSON.parse('{"properties": {"__proto__": {"x": 1}, "cls": "a", "n": 2}, "vocabularies": {"toString": {"terms": {}}, "cls": {"terms": {}}}}');
    const kept = new FieldFilter(['__proto__', 'cls']).head(f);
    expect(JSON.stringify(kept)).toBe('{"properties":{"__proto__":{"x":1},"cls":"a"},"vocabularies":{"cls":{"terms":{}}}}');
    expect(Object.getPrototypeOf(kept.properties)).toBe(Object.prototype);
    const stored = new TextEncoder().encode(featureHeadText(f, 'p'));
    expect(new FieldFilter(['__proto__.x']).headText(stored)).toBe('{"type":"Feature","layer":"p","properties":{"__proto__":{"x":1}},"geometry":');
  });
});
