// V8's garbage collector for the library to call at the end of reading (BuildIO.collect), where the CLI can reach it.
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A full collection on the calling thread, or undefined where V8 gives none. After reading, the reading thread holds
 * what reading left (a traced mask's pixels and positions: 850 MB at 20,000² px) and allocates too little while the
 * workers tile to collect it: it stayed in memory beside their units, the build's peak.
 */
export function fullCollection(): (() => void) | undefined {
  v8.setFlagsFromString('--expose-gc');
  const gc: unknown = vm.runInNewContext('gc');
  return typeof gc === 'function' ? () => { (gc as () => void)(); } : undefined;
}
