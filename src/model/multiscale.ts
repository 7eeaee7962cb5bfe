// Multiscale object (spec 2.2): axes that give positions their physical meaning, and the transformations.

export type AxisType = 'space' | 'time' | 'channel';

export const AXIS_TYPES: readonly AxisType[] = ['space', 'time', 'channel'];

export const AXIS_UNITS = [
  'angstrom', 'attometer', 'centimeter', 'decimeter', 'degree', 'exameter', 'femtometer', 'foot', 'gigameter',
  'hectometer', 'inch', 'kilometer', 'megameter', 'meter', 'micrometer', 'mile', 'millimeter', 'nanometer',
  'parsec', 'petameter', 'picometer', 'pixel', 'radian', 'terameter', 'yard', 'yoctometer', 'yottameter',
  'zeptometer', 'zettameter',
] as const;
export type AxisUnit = (typeof AXIS_UNITS)[number];

export interface Axis {
  name: string;
  type?: AxisType;
  unit?: AxisUnit;
  description?: string;
  [foreign: string]: unknown;
}

export interface IdentityTransformation { type: 'identity' }
export interface ScaleTransformation { type: 'scale'; scale: number[] }
export interface TranslationTransformation { type: 'translation'; translation: number[] }
export type CoordinateTransformation = IdentityTransformation | ScaleTransformation | TranslationTransformation;

/** Either `coordinateTransformations` or `transformationMatrix`, never both. */
export interface Multiscale {
  axes: Axis[];
  coordinateTransformations?: CoordinateTransformation[];
  transformationMatrix?: number[][];
  [foreign: string]: unknown;
}

/** What one pixel is along x and y: a size in each axis' unit. */
export interface PixelSize { x: number; y: number; unitX: AxisUnit; unitY: AxisUnit }

/**
 * A pixel's size along the axes named x and y of a multiscale object: their units, times the scales of its
 * transformations (translations move, they do not size) or its matrix's diagonal. Undefined when either axis is
 * missing or has no unit.
 */
export function pixelOf(m: Multiscale | undefined): PixelSize | undefined {
  if (m === undefined || !Array.isArray(m.axes)) return undefined;
  const ix = m.axes.findIndex((a) => a.name === 'x'), iy = m.axes.findIndex((a) => a.name === 'y');
  const unitX = m.axes[ix]?.unit, unitY = m.axes[iy]?.unit;
  if (unitX === undefined || unitY === undefined) return undefined;
  let x = 1, y = 1;
  if (Array.isArray(m.transformationMatrix)) {
    x = m.transformationMatrix[ix]?.[ix] ?? 1; y = m.transformationMatrix[iy]?.[iy] ?? 1;
  }
  for (const t of m.coordinateTransformations ?? []) if (t.type === 'scale') { x *= t.scale[ix] ?? 1; y *= t.scale[iy] ?? 1; }
  return { x, y, unitX, unitY };
}

/** Metres in one of each length unit the spec lists; degree, radian and pixel are none. */
const METRES: Partial<Record<AxisUnit, number>> = {
  yottameter: 1e24, zettameter: 1e21, exameter: 1e18, petameter: 1e15, terameter: 1e12, gigameter: 1e9, megameter: 1e6,
  kilometer: 1e3, hectometer: 1e2, meter: 1, decimeter: 1e-1, centimeter: 1e-2, millimeter: 1e-3, micrometer: 1e-6,
  nanometer: 1e-9, angstrom: 1e-10, picometer: 1e-12, femtometer: 1e-15, attometer: 1e-18, zeptometer: 1e-21,
  yoctometer: 1e-24, inch: 0.0254, foot: 0.3048, yard: 0.9144, mile: 1609.344, parsec: 3.085677581491367e16,
};

/**
 * Whether two sizes are one, to a relative 1e-6 (a size read back from a resolution carries noise in its 7th digit):
 * lengths after converting both to metres (0.25 micrometer is 250 nanometer), other units only in the same unit.
 */
export function sameSize(a: number, unitA: AxisUnit, b: number, unitB: AxisUnit): boolean {
  const ma = METRES[unitA], mb = METRES[unitB];
  if (unitA !== unitB && (ma === undefined || mb === undefined)) return false;
  const x = unitA === unitB ? a : a * (ma as number), y = unitA === unitB ? b : b * (mb as number);
  return Math.abs(x - y) <= 1e-6 * Math.max(Math.abs(x), Math.abs(y));
}
