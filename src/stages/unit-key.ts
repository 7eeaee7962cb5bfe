// Work-unit keys `t/c/z/x/y`, a plane and a cell: the one module that writes, reads, orders and names them.
import type { Plane } from '../tiling/space.js';

export interface UnitKeyParts { plane: Plane; x: number; y: number }

/** The plane part of the keys of a plane, `t/c/z/`: a hot loop that routes records adds only the cell (`cellKey`). */
export function unitKeyPrefix(plane: Plane): string {
  return `${plane.t}/${plane.c}/${plane.z}/`;
}

/** The key of cell (x, y) of the plane whose `unitKeyPrefix` is `prefix`. */
export function cellKey(prefix: string, x: number, y: number): string {
  return `${prefix}${x}/${y}`;
}

export function unitKey(plane: Plane, x: number, y: number): string {
  return cellKey(unitKeyPrefix(plane), x, y);
}

export function parseUnitKey(key: string): UnitKeyParts {
  const parts = key.split('/');
  const [t, c, z, x, y] = parts.map(Number);
  if (parts.length !== 5 || ![t, c, z, x, y].every((n) => Number.isInteger(n) && n >= 0)) {
    throw new RangeError(`"${key}" is not a work-unit key t/c/z/x/y`);
  }
  return { plane: { t, c, z }, x, y };
}

/** Orders keys numerically, part by part: t, c, z, then x, then y. */
export function compareUnitKeys(a: string, b: string): number {
  const pa = a.split('/'), pb = b.split('/');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d;
  }
  return pa.length - pb.length;
}

/** The key as a file name (`t_c_z_x_y`), without extension: keys hold digits and `/` only. */
export function unitFileName(key: string): string {
  return key.replace(/\//g, '_');
}

/** The key a file of `unitFileName` names (its extension removed first). */
export function unitKeyOfFileName(name: string): string {
  return name.replace(/_/g, '/');
}
