// Worker thread entry: runs one parse batch or one tile unit per call; results' byte buffers go back by transfer, not copy.
import { Piscina, transferableSymbol, valueSymbol } from 'piscina';
import { parseBatch, type ParseResult, type ParseTask } from '../stages/parse.js';
import { tileUnit, type TileTask, type UnitResult } from '../stages/unit.js';
import { transferable } from './pool.js';

export type Task = ParseTask | TileTask;

/** `value` with the buffers behind `views` moved to the caller. */
function moving<T>(value: T, views: Uint8Array[]): ReturnType<typeof Piscina.move> {
  const list = transferable(views);
  return Piscina.move({ get [transferableSymbol]() { return list; }, get [valueSymbol]() { return value; } } as never);
}

export default function run(task: Task): ParseResult | UnitResult | ReturnType<typeof Piscina.move> {
  if (task.kind === 'parse') {
    const res = parseBatch(task);
    return moving(res, res.units.map(([, b]) => b));
  }
  const res = tileUnit(task);
  return moving(res, [...res.tiles.map((t) => t.bytes), ...res.next.map(([, b]) => b)]);
}
