// A mask source's features as GeoJSON, whichever way each was handed on: text, a value, or a value made flat.
import type { Feature } from '../../src/model/feature.js';
import type { MultiPolygon, Polygon, Position } from '../../src/model/geometry.js';
import { FeatureText, type FeatureSource } from '../../src/io/source.js';
import { FlatValue } from '../../src/tiling/flat-value.js';

const utf8 = new TextDecoder();

/** One feature a source gave, as GeoJSON: a flat value's rings as positions, closing ones included. */
export function asGeoJSON(f: Feature | FeatureText | FlatValue): Feature {
  if (f instanceof FeatureText) return JSON.parse(utf8.decode(f.bytes)) as Feature;
  if (!(f instanceof FlatValue)) return f;
  const polys = f.geom.polys.map((p) => p.map((r) => Array.from({ length: r.length / 2 }, (_, i): Position => [r[2 * i], r[2 * i + 1]])));
  const geometry: Polygon | MultiPolygon = f.geom.type === 'Polygon' ? { type: 'Polygon', coordinates: polys[0] } : { type: 'MultiPolygon', coordinates: polys };
  return { ...f.feature, geometry };
}

/** Every feature of a source, in order, as GeoJSON. */
export async function featuresAsGeoJSON(source: FeatureSource): Promise<Feature[]> {
  const out: Feature[] = [];
  for await (const group of source.features()) out.push(...group.map(asGeoJSON));
  return out;
}
