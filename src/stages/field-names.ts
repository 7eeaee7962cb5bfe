// The names of the fields features have, as the descriptor and --fields name them, gathered from features --fields filters.
import type { Feature, Properties } from '../model/feature.js';
import { isPlainObject } from '../model/fields.js';
import { TAGGED_MEMBERS, taggedMember } from './assign.js';

/** A member of an object: a field (`leaf`), an object of fields (`inner`), or both in different features. */
interface Named { leaf: boolean; inner?: Map<string, Named> }

/**
 * The field names of the features added, at most `max`: what a name of `--fields` that no feature has may have meant,
 * once the statistics hold only the fields kept. Held as a tree of member names, not dotted strings: the members'
 * names are found in maps without a string made per field of each feature (a QuPath cell has 34; making and hashing
 * each dotted name cost a build of 100,000 cells with a misspelt name 9% more CPU).
 */
export class FieldNames {
  private readonly root = new Map<string, Named>();
  private count = 0;

  constructor(private readonly max: number) {}

  add(f: Feature): void {
    if (f.properties) this.object(this.root, f.properties);
    for (const m of TAGGED_MEMBERS) if (taggedMember(f, m) !== undefined) this.leaf(this.root, m);
  }

  /** The names, dotted for nested objects (`classification.name`); those of one object together, where it was first met. */
  names(): string[] {
    const out: string[] = [];
    const walk = (level: Map<string, Named>, prefix: string) => {
      for (const [key, n] of level) {
        if (n.leaf) out.push(prefix + key);
        if (n.inner) walk(n.inner, `${prefix}${key}.`);
      }
    };
    walk(this.root, '');
    return out;
  }

  private object(level: Map<string, Named>, props: Properties): void {
    for (const key in props) {
      if (!Object.hasOwn(props, key)) continue;
      const v = props[key];
      if (!isPlainObject(v)) { this.leaf(level, key); continue; }
      let n = level.get(key);
      if (n === undefined) {
        // Full: no object met after is held either (its fields would not be).
        if (this.count >= this.max) continue;
        n = { leaf: false };
        level.set(key, n);
      }
      this.object((n.inner ??= new Map()), v);
    }
  }

  private leaf(level: Map<string, Named>, key: string): void {
    const n = level.get(key);
    if (n?.leaf) return;
    if (this.count >= this.max) return;
    this.count++;
    if (n) n.leaf = true;
    else level.set(key, { leaf: true });
  }
}
