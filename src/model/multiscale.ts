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
