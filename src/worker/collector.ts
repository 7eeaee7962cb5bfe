// V8's garbage collector, where a thread may call it: the reading thread at the end of reading (BuildIO.collect), a worker after a heavy batch.
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A full collection on the calling thread, or undefined where V8 gives none. After reading, the reading thread holds
 * what reading left (a traced mask's pixels and positions: 850 MB at 20,000² px) and allocates too little while the
 * workers tile to collect it: it stayed in memory beside their units, the build's peak. A worker after a unit of a
 * class mask's classes whole kept about 380 MB of its garbage into its next units (TileBatch.collect).
 */
export function fullCollection(): (() => void) | undefined {
  v8.setFlagsFromString('--expose-gc');
  const gc: unknown = vm.runInNewContext('gc');
  return typeof gc === 'function' ? () => { (gc as () => void)(); } : undefined;
}
