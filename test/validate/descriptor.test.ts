// Unit tests of validateDescriptor: required members, layers and fields, bounds/center/zooms, assets, extensions.
import { describe, expect, it } from 'vitest';
import { validateDescriptor } from '../../src/validate/index.js';
import { codes, expectOne } from './helpers.js';

const layer = (extra: Record<string, unknown> = {}) => ({ id: 'cells', fields: { label: 'Number', cellType: 'String', dividing: 'Bool' }, ...extra });
const descriptor = (extra: Record<string, unknown> = {}) => ({
  tilejson: '3.0.0', tiles: ['{zlvl}/{x}/{y}.pbf'], vector_layers: [layer()], ...extra,
});
const without = (key: string) => {
  const d: Record<string, unknown> = descriptor();
  delete d[key];
  return d;
};

describe('valid descriptors', () => {
  it('minimal', () => expect(validateDescriptor(descriptor())).toEqual([]));
  it('with every extension', () => {
    expect(validateDescriptor(descriptor({
      name: 'n', description: 'd', version: '1.0.0', attribution: 'a', legend: 'l', scheme: 'xyz', grids: 'g', data: 'x', template: 't', format: 'json',
      minzoom: 0, maxzoom: 30, fillzoom: 4,
      bounds: [0, 0, 0, 0, 0, 2, 1, 3, 100, 100], center: [0, 0, 0, 50, 50, 2],
      multiscale: { axes: [{ name: 'x' }, { name: 'y' }] }, scale_factor: 2,
      assets: [{ role: 'raster', href: 'a.zarr', media_type: 'application/x-zarr', title: 'image' }],
      vector_layers: [
        layer({ fieldranges: { label: [1, 9], cellType: ['a', 'b'] }, fieldenums: { cellType: ['a', 'b'] }, fielddescriptions: { label: 'segmentation id' },
          description: 'cells', minzoom: 2, maxzoom: 2, vocabularies: { cellType: { terms: { a: { uri: 'http://x/a' } } } } }),
        { id: 'empty', fields: {} }, { id: 'null', fields: null },
      ],
      foreign: { anything: [1, 2] },
    }))).toEqual([]);
  });
  it('bounds of 4 and center of 3', () => expect(validateDescriptor(descriptor({ bounds: [0, 0, 10, 10], center: [5, 5, 0] }))).toEqual([]));
});

describe('required members (spec 7.8)', () => {
  it('tilejson-missing and tilejson-not-string', () => {
    expectOne(validateDescriptor(without('tilejson')), 'tilejson-missing', '', 'descriptor must have tilejson (the TileJSON version, "3.0.0"), found none');
    expectOne(validateDescriptor(descriptor({ tilejson: 3 })), 'tilejson-not-string', '/tilejson', 'tilejson must be a string such as "3.0.0", found 3');
  });
  it('tiles-missing, tiles-invalid, tile-url-not-string', () => {
    expectOne(validateDescriptor(without('tiles')), 'tiles-missing', '', 'descriptor must have tiles (an array of tile URL patterns), found none');
    expectOne(validateDescriptor(descriptor({ tiles: [] })), 'tiles-invalid', '/tiles', 'tiles must be a non-empty array of tile URL patterns, found []');
    expectOne(validateDescriptor(descriptor({ tiles: '{z}/{x}/{y}.pbf' })), 'tiles-invalid', '/tiles', 'found "{z}/{x}/{y}.pbf"');
    expectOne(validateDescriptor(descriptor({ tiles: ['a', 7] })), 'tile-url-not-string', '/tiles/1', 'tile URL pattern must be a string, found 7');
  });
  it('vector-layers-missing and vector-layers-not-array', () => {
    expectOne(validateDescriptor(without('vector_layers')), 'vector-layers-missing', '',
      'descriptor must have vector_layers (an array of vector layer objects), found none');
    expectOne(validateDescriptor(descriptor({ vector_layers: {} })), 'vector-layers-not-array', '/vector_layers', 'found {}');
  });
  it('document-not-object', () => {
    expectOne(validateDescriptor('tileset.json'), 'document-not-object', '', 'tileset descriptor must be an object, found "tileset.json"');
  });
});

describe('vector layers', () => {
  it('layer-not-object, layer-id-missing, layer-id-not-string, layer-id-duplicate', () => {
    expectOne(validateDescriptor(descriptor({ vector_layers: ['cells'] })), 'layer-not-object', '/vector_layers/0',
      'vector layer must be an object with id and fields, found "cells"');
    expectOne(validateDescriptor(descriptor({ vector_layers: [{ fields: {} }] })), 'layer-id-missing', '/vector_layers/0', 'vector layer must have an id, found none');
    expectOne(validateDescriptor(descriptor({ vector_layers: [{ id: 3, fields: {} }] })), 'layer-id-not-string', '/vector_layers/0/id', 'found 3');
    expectOne(validateDescriptor(descriptor({ vector_layers: [layer(), layer()] })), 'layer-id-duplicate', '/vector_layers/1/id',
      'vector layer ids must be unique, found "cells" again');
  });
  it('layer-fields-missing and layer-fields-not-object', () => {
    expectOne(validateDescriptor(descriptor({ vector_layers: [{ id: 'a' }] })), 'layer-fields-missing', '/vector_layers/0',
      'vector layer must have fields');
    expectOne(validateDescriptor(descriptor({ vector_layers: [{ id: 'a', fields: ['x'] }] })), 'layer-fields-not-object', '/vector_layers/0/fields',
      'fields must be a map of field name to "String", "Number" or "Bool", found ["x"]');
  });
  it('field-type-invalid (spec 7.7) points to fielddescriptions', () => {
    const issue = expectOne(validateDescriptor(descriptor({ vector_layers: [layer({ fields: { area: 'Cell area in pixels' } })] })),
      'field-type-invalid', '/vector_layers/0/fields/area');
    expect(issue.message).toBe('field type must be exactly "String", "Number" or "Bool", found "Cell area in pixels"; a description of the field belongs in fielddescriptions');
    for (const bad of ['string', 'number', 'Boolean', 'Array', ['String'], { type: 'String' }, 1, null]) {
      expect(codes(validateDescriptor(descriptor({ vector_layers: [layer({ fields: { f: bad } })] })))).toEqual(['field-type-invalid']);
    }
    expectOne(validateDescriptor(descriptor({ vector_layers: [layer({ fields: { 'a/b': [] } })] })), 'field-type-invalid', '/vector_layers/0/fields/a~1b');
  });
  it('fieldranges-invalid, fieldenums-invalid, fielddescriptions-invalid', () => {
    const one = (extra: Record<string, unknown>) => validateDescriptor(descriptor({ vector_layers: [layer(extra)] }));
    expectOne(one({ fieldranges: [1, 2] }), 'fieldranges-invalid', '/vector_layers/0/fieldranges',
      'fieldranges must be a map of field name to an array of numbers or strings, found [1,2]');
    expectOne(one({ fieldranges: { label: [1, true] } }), 'fieldranges-invalid', '/vector_layers/0/fieldranges/label',
      'fieldranges values must be an array of numbers or strings, found [1,true]');
    expectOne(one({ fieldenums: { cellType: 'a' } }), 'fieldenums-invalid', '/vector_layers/0/fieldenums/cellType', 'found "a"');
    expectOne(one({ fieldenums: { cellType: [1] } }), 'fieldenums-invalid', '/vector_layers/0/fieldenums/cellType', 'an array of strings, found [1]');
    expectOne(one({ fielddescriptions: { label: 5 } }), 'fielddescriptions-invalid', '/vector_layers/0/fielddescriptions/label',
      'fielddescriptions values must be a string, found 5');
    expectOne(one({ fielddescriptions: 'x' }), 'fielddescriptions-invalid', '/vector_layers/0/fielddescriptions');
  });
  it('layer zooms, description and vocabularies', () => {
    const one = (extra: Record<string, unknown>) => validateDescriptor(descriptor({ vector_layers: [layer(extra)] }));
    expectOne(one({ minzoom: -1 }), 'zoom-invalid', '/vector_layers/0/minzoom', 'minzoom must be an integer from 0 to 30, found -1');
    expectOne(one({ minzoom: 4, maxzoom: 3 }), 'zoom-range', '/vector_layers/0/minzoom', 'minzoom must not be above maxzoom, found minzoom 4 and maxzoom 3');
    expectOne(one({ description: 1 }), 'member-not-string', '/vector_layers/0/description');
    expectOne(one({ vocabularies: 'http://x' }), 'vocabularies-type', '/vector_layers/0/vocabularies');
    expectOne(one({ vocabularies: { cellType: {} } }), 'vocabulary-terms-missing', '/vector_layers/0/vocabularies/cellType');
  });
});

describe('bounds, center, zooms (spec 4.2, 8)', () => {
  it('bounds-invalid, bounds-not-number, bounds-length-unusual, bounds-inverted', () => {
    expectOne(validateDescriptor(descriptor({ bounds: [0, 0, 10] })), 'bounds-invalid', '/bounds', 'bounds must be an array of 4 to 10 numbers, found [0,0,10] (3)');
    expectOne(validateDescriptor(descriptor({ bounds: [0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1] })), 'bounds-invalid', '/bounds', '(11)');
    expectOne(validateDescriptor(descriptor({ bounds: 'all' })), 'bounds-invalid', '/bounds', 'found "all"');
    expectOne(validateDescriptor(descriptor({ bounds: [0, 0, '10', 10] })), 'bounds-not-number', '/bounds/2', 'bounds entries must be finite numbers, found "10"');
    const unusual = expectOne(validateDescriptor(descriptor({ bounds: [0, 0, 0, 10, 10, 10] })), 'bounds-length-unusual', '/bounds', 'bounds of 6 numbers have no defined layout');
    expect(unusual.severity).toBe('warning');
    expectOne(validateDescriptor(descriptor({ bounds: [10, 0, 0, 10] })), 'bounds-inverted', '/bounds', 'bounds minimum 10 is above its maximum 0');
    expectOne(validateDescriptor(descriptor({ bounds: [0, 3, 0, 0, 0, 1, 2, 0, 9, 9] })), 'bounds-inverted', '/bounds', 'bounds minimum 3 is above its maximum 2');
  });
  it('center-invalid, center-not-number, center zoom', () => {
    expectOne(validateDescriptor(descriptor({ center: [5, 5] })), 'center-invalid', '/center', 'center must be an array of 3 to 6 numbers, zoom last, found [5,5] (2)');
    expectOne(validateDescriptor(descriptor({ center: [0, 0, 0, 0, 0, 0, 0] })), 'center-invalid', '/center', '(7)');
    expectOne(validateDescriptor(descriptor({ center: [5, null, 0] })), 'center-not-number', '/center/1', 'center entries must be finite numbers, found null');
    expectOne(validateDescriptor(descriptor({ center: [5, 5, 2.5] })), 'zoom-invalid', '/center/2', 'center zoom (its last entry) must be an integer from 0 to 30, found 2.5');
  });
  it('zoom-invalid and zoom-range on the descriptor', () => {
    expectOne(validateDescriptor(descriptor({ maxzoom: 31 })), 'zoom-invalid', '/maxzoom', 'maxzoom must be an integer from 0 to 30, found 31');
    expectOne(validateDescriptor(descriptor({ minzoom: '0' })), 'zoom-invalid', '/minzoom', 'found "0"');
    expectOne(validateDescriptor(descriptor({ fillzoom: 1.5 })), 'zoom-invalid', '/fillzoom', 'fillzoom must be an integer from 0 to 30, found 1.5');
    expectOne(validateDescriptor(descriptor({ minzoom: 6, maxzoom: 5 })), 'zoom-range', '/minzoom', 'found minzoom 6 and maxzoom 5');
  });
});

describe('other members', () => {
  it('member-not-string for every string member; grids and data as TileJSON 3.0.0 gives them too (arrays of strings)', () => {
    for (const name of ['grids', 'data']) {
      expect(validateDescriptor(descriptor({ [name]: ['a/{z}/{x}/{y}.json'] }))).toEqual([]);
      expectOne(validateDescriptor(descriptor({ [name]: ['a', 2] })), 'member-not-string', `/${name}`, `${name} must be a URL pattern or an array of them (strings), found`);
    }
    for (const name of ['name', 'description', 'version', 'attribution', 'legend', 'scheme', 'template', 'format']) {
      expectOne(validateDescriptor(descriptor({ [name]: 1 })), 'member-not-string', `/${name}`, `${name} must be a string, found 1`);
    }
  });
  it('scale-factor-invalid', () => {
    expectOne(validateDescriptor(descriptor({ scale_factor: '2' })), 'scale-factor-invalid', '/scale_factor',
      'scale_factor must be a positive number (2 is assumed when absent), found "2"');
    expectOne(validateDescriptor(descriptor({ scale_factor: 0 })), 'scale-factor-invalid', '/scale_factor', 'found 0');
    expect(validateDescriptor(descriptor({ scale_factor: 1.5 }))).toEqual([]);
  });
  it('multiscale is validated in a descriptor', () => {
    expectOne(validateDescriptor(descriptor({ multiscale: { axes: [{ name: 'x' }, { name: 'y' }], transformationMatrix: [[1, 1], [1, 1]] } })),
      'matrix-singular', '/multiscale/transformationMatrix');
  });
  it('assets-not-array, asset-not-object, asset-role-invalid, asset-href-invalid', () => {
    expectOne(validateDescriptor(descriptor({ assets: {} })), 'assets-not-array', '/assets', 'assets must be an array of asset objects, found {}');
    expectOne(validateDescriptor(descriptor({ assets: [null] })), 'asset-not-object', '/assets/0', 'asset must be an object with role and href, found null');
    expectOne(validateDescriptor(descriptor({ assets: [{ href: 'a' }] })), 'asset-role-invalid', '/assets/0', 'asset must have a string role');
    expectOne(validateDescriptor(descriptor({ assets: [{ href: 'a', role: 1 }] })), 'asset-role-invalid', '/assets/0/role', 'found 1');
    expectOne(validateDescriptor(descriptor({ assets: [{ role: 'raster' }] })), 'asset-href-invalid', '/assets/0', 'asset must have a string href');
    expectOne(validateDescriptor(descriptor({ assets: [{ role: 'raster', href: ['a'] }] })), 'asset-href-invalid', '/assets/0/href', 'found ["a"]');
    expectOne(validateDescriptor(descriptor({ assets: [{ role: 'raster', href: 'a', title: 2 }] })), 'member-not-string', '/assets/0/title');
  });
  it('nested paths under a given prefix', () => {
    expectOne(validateDescriptor(descriptor({ tiles: [] }), '/overview'), 'tiles-invalid', '/overview/tiles');
  });
});
