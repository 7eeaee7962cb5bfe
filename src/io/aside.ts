// What a claim or a removal of a work directory, killed part-way, leaves beside it; and its removal by a later run.
import fs from 'node:fs';
import path from 'node:path';
import { CLAIM_GRACE_MS, CLAIMING, isAside, OWNER_FILE, parseOwner, readText, type Owner } from './owner-file.js';

/**
 * Removes the folders beside work directory `root` that a claim or a removal killed part-way left (`isAside`: its
 * name, a tag), when they hold nothing but what a build writes there (`isState`, entry by entry: a folder of other
 * files that bears such a name is not one this tool left). Kept: a claim under way (no owner written yet, for up to
 * CLAIM_GRACE_MS), and state whose owner still runs (`runs`), which a `retire` is about to put back.
 */
export function sweepAside(root: string, runs: (o: Owner, file: string) => boolean, isState: (name: string) => boolean): void {
  const parent = path.dirname(root);
  const names = fs.readdirSync(parent, { withFileTypes: true }).filter((e) => e.isDirectory() && isAside(e.name, path.basename(root)));
  for (const { name: n } of names) {
    const dir = path.join(parent, n);
    const o = readText(path.join(dir, OWNER_FILE));
    const owner = o === undefined ? undefined : parseOwner(o);
    if (owner && runs(owner, path.join(dir, OWNER_FILE))) continue;
    if (!owner && n.includes(CLAIMING) && Date.now() - (fs.statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? 0) < CLAIM_GRACE_MS) continue;
    try {
      if (fs.readdirSync(dir).every(isState)) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another process removes it too.
    }
  }
}
