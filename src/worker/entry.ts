// Worker thread entry: runs one parse batch or one tile unit per call (see protocol.ts); result bytes go back by transfer, not copy.
import { Piscina, transferableSymbol, valueSymbol } from 'piscina';
import { parseBatch } from '../stages/parse.js';
import { tileUnit } from '../stages/unit.js';
import { resultTransfers, type Task, type TaskResult } from './protocol.js';

/** `value` with the buffers listed moved to the caller. */
function moving(value: TaskResult, list: ArrayBuffer[]): ReturnType<typeof Piscina.move> {
  return Piscina.move({ get [transferableSymbol]() { return list; }, get [valueSymbol]() { return value; } } as never);
}

export default function run(task: Task): ReturnType<typeof Piscina.move> {
  const res = task.kind === 'parse' ? parseBatch(task) : tileUnit(task);
  return moving(res, resultTransfers(res));
}
