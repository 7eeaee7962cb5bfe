// Why a resumed build's plan is not the interrupted one's, when one thing read anew says it: its pixel size.
import { pixelOf, type Multiscale } from '../model/multiscale.js';
import { pixelSizeText } from '../io/pixel-size.js';
import type { BuildPlan } from '../stages/plan.js';

/**
 * Why a resumed build's plan is not the interrupted one's when its multiscale is what differs, else undefined. The
 * fingerprint holds the --image file's size and time, not what it states: an image written again with another pixel
 * size and its time kept passes it, and the refusal after the read said the inputs differed, which they did not.
 */
export function pixelSizeChange(thenPlan: BuildPlan, nowPlan: BuildPlan): string | undefined {
  const then = thenPlan.collection.multiscale, now = nowPlan.collection.multiscale;
  // Only when nothing else differs: other bytes on stdin are other inputs, whatever their multiscale.
  if (JSON.stringify(thenPlan) !== JSON.stringify({ ...nowPlan, collection: { ...nowPlan.collection, multiscale: then } })) return undefined;
  if (JSON.stringify(then) === JSON.stringify(now)) return undefined;
  const text = (m: Multiscale | undefined) => {
    const p = pixelOf(m);
    return p ? pixelSizeText(p) : m === undefined ? 'none' : 'no size (no axes x and y with units)';
  };
  const sizes = text(then) === text(now) ? 'its multiscale differs' : `its pixel size is ${text(now)} now, ${text(then)} then`;
  return `the pyramid's inputs are the same, but ${sizes}: the --image file, or an input's multiscale, states another since, and the descriptor and JSON tiles carry it`;
}
