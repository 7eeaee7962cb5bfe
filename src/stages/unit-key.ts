// Work-unit keys `t/c/z/x/y`, a plane and a cell: the one module that writes, reads, orders and names them.
import type { Plane } from '../tiling/space.js';

export interface UnitKeyParts { plane: Plane; x: number; y: number }

/**
 * The c of the records of objects on every channel (QuPath's plane c -1, or an object with none), in the reading
 * pass's store and thinning estimates only: which channels a pyramid has is known once every input is read, and the
 * plan then has each channel's units read these records beside their own (`channelsOf`). No unit, tile or plane of
 * a pyramid has this c.
 */
export const EVERY_CHANNEL = -1;

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
  if (parts.length !== 5 || ![t, c === EVERY_CHANNEL ? 0 : c, z, x, y].every((n) => Number.isInteger(n) && n >= 0)) {
    throw new RangeError(`"${key}" is not a work-unit key t/c/z/x/y`);
  }
  return { plane: { t, c, z }, x, y };
}

/** The plane of a `unitKeyPrefix` (`t/c/z/`, as thinning estimates key their planes). */
export function planeOfPrefix(prefix: string): Plane {
  return parseUnitKey(`${prefix}0/0`).plane;
}

/**
 * The channels whose planes a pyramid has, from the keys of its stored records (any order): the c of each plane but
 * the every-channel one, or channel 0 alone when no record names another (a pyramid without a channel axis).
 */
export function channelsOf(keys: Iterable<string>): number[] {
  const channels = new Set<number>();
  for (const k of keys) {
    const { c } = parseUnitKey(k).plane;
    if (c !== EVERY_CHANNEL) channels.add(c);
  }
  return channels.size === 0 ? [0] : [...channels].sort((a, b) => a - b);
}

/** The planes a stored plane's records are tiled in: its own, or for the every-channel plane, each of `channels` at its t and z. */
export function tiledPlanes(plane: Plane, channels: readonly number[]): Plane[] {
  return plane.c === EVERY_CHANNEL ? channels.map((c) => ({ ...plane, c })) : [plane];
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
