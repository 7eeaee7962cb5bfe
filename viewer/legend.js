// The legend in the panel: a row per value of the colour-by (or a Number field's ramp), and what grey stands for.

import { hexToRgba } from './colours.js';
import { AREA_FILL } from './style.js';

/**
 * The CSS background of a swatch or ramp as the map draws an area of `colours` (one, or a ramp's stops): filled at the
 * map's alpha over the map's white (`whole`: a disc, or a part filled whole where no slide image is shown), outlined
 * in the whole colour: a swatch by its border, a ramp by bands along its top and bottom. At the whole colour, the ramp
 * matched no cell on the map.
 */
function drawnAs(colours, whole, outlined) {
  const across = (alpha) => `linear-gradient(to right, ${(colours.length === 1 ? [colours[0], colours[0]] : colours).map((c) => hexToRgba(c, alpha)).join(', ')})`;
  const bands = outlined ? `${across(1)} top / 100% 2px no-repeat, ${across(1)} bottom / 100% 2px no-repeat, ` : '';
  return `${bands}${across(whole ? 1 : AREA_FILL)}, #fff`;
}

/** A footnote's mark: `n` in superscript digits. */
const markOf = (n) => [...String(n)].map((d) => '⁰¹²³⁴⁵⁶⁷⁸⁹'[Number(d)]).join('');

/**
 * A row: the value's swatch (its colour also in `data-colour`, for tests and scripts; in `data-fill`, the alpha it is
 * filled at) and the value; when the data gives another value its colour (or one nearly so), the mark of the footnote
 * saying so, its number in `data-shared`.
 */
function rowOf({ value, colour, shared }, whole) {
  const row = document.createElement('div');
  const sw = document.createElement('span');
  sw.className = 'swatch';
  sw.style.background = drawnAs([colour], whole, false);
  sw.style.borderColor = colour;
  sw.dataset.colour = colour;
  sw.dataset.fill = String(whole ? 1 : AREA_FILL);
  row.append(sw, document.createTextNode(value));
  if (shared) {
    row.dataset.shared = String(shared);
    row.append(Object.assign(document.createElement('sup'), { className: 'same', textContent: markOf(shared) }));
  }
  return row;
}

/**
 * Which colours the map has filled whole (discs; parts, nuclei, where no slide image is shown) and at AREA_FILL (other
 * areas, and parts over the image) since the colour-by or the background was chosen: `note(colour, whole)` as each feature is
 * styled; `changed()` says once whether the legend drawn before is out of date. A value is only known to be a part's
 * once it is drawn: one layer may hold cells and nuclei.
 */
export function drawnFills() {
  const wholes = new Set(), areas = new Set();
  let stale = false;
  return {
    note(colour, whole) {
      const seen = whole ? wholes : areas;
      if (!seen.has(colour)) { seen.add(colour); stale = true; }
    },
    reset() { wholes.clear(); areas.clear(); stale = false; },
    changed() { const was = stale; stale = false; return was; },
    wholeOnly: (colour) => wholes.has(colour) && !areas.has(colour),
    allWhole: () => wholes.size > 0 && areas.size === 0,
  };
}

/** Fills `element` with a legend as colours.js's legendOf gives it, the fills as `fills` (drawnFills) saw them drawn. */
export function showLegend(element, { rows, more, ramp, note, none, shared = [] }, fills) {
  const items = rows.map((row) => rowOf(row, fills.wholeOnly(row.colour)));
  if (note) items.push(Object.assign(document.createElement('div'), { className: 'note', textContent: note }));
  if (more) items.push(Object.assign(document.createElement('div'), { textContent: `… and ${more} more` }));
  if (ramp) {
    const bar = Object.assign(document.createElement('div'), { className: 'ramp' });
    const whole = fills.allWhole();
    bar.style.background = drawnAs(ramp.stops, whole, true);
    bar.dataset.fill = String(whole ? 1 : AREA_FILL);
    items.push(bar, Object.assign(document.createElement('div'), { className: 'ramp-ends', textContent: `${ramp.min} … ${ramp.max}` }));
  }
  if (none) items.push(Object.assign(rowOf({ value: 'no value', colour: none }, fills.wholeOnly(none)), { className: 'none' }));
  // Values the map cannot tell apart by colour: the card under the pointer names each feature's.
  items.push(...shared.map(({ count, near }, i) => Object.assign(document.createElement('div'), {
    className: 'shared',
    textContent: `${markOf(i + 1)} ${count} values share ${near ? 'nearly ' : ''}one colour in the data: point at a feature to see which`,
  })));
  element.replaceChildren(...items);
}
