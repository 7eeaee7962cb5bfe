// Worker thread entry: runs one parse batch or one tile unit per call; encoded tiles go back by transfer, not copy.
import { Piscina, transferableSymbol, valueSymbol } from 'piscina';
import { parseBatch, type ParseResult, type ParseTask } from '../stages/parse.js';
import { tileUnit, type TileTask, type UnitResult } from '../stages/unit.js';

export type Task = ParseTask | TileTask;

export default function run(task: Task): ParseResult | UnitResult | ReturnType<typeof Piscina.move> {
  if (task.kind === 'parse') return parseBatch(task);
  const res = tileUnit(task);
  // A buffer may be shared by several views and must be listed once; pooled Node buffers are not transferable.
  const owned = res.tiles.filter((t) => t.bytes.byteOffset === 0 && t.bytes.byteLength === t.bytes.buffer.byteLength && t.bytes.byteLength > 0);
  const list = [...new Set(owned.map((t) => t.bytes.buffer))];
  return Piscina.move({ get [transferableSymbol]() { return list; }, get [valueSymbol]() { return res; } } as never);
}
