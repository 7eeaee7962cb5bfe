// The legend in the panel: a row per value of the colour-by (or a Number field's ramp), and what grey stands for.

/** A row: the value's swatch (its colour also in `data-colour`, for tests and scripts) and the value. */
function rowOf({ value, colour }) {
  const row = document.createElement('div');
  const sw = document.createElement('span');
  sw.className = 'swatch';
  sw.style.background = colour;
  sw.dataset.colour = colour;
  row.append(sw, document.createTextNode(value));
  return row;
}

/** Fills `element` with a legend as colours.js's legendOf gives it. */
export function showLegend(element, { rows, more, ramp, note, none }) {
  const items = rows.map(rowOf);
  if (note) items.push(Object.assign(document.createElement('div'), { className: 'note', textContent: note }));
  if (more) items.push(Object.assign(document.createElement('div'), { textContent: `… and ${more} more` }));
  if (ramp) {
    const bar = Object.assign(document.createElement('div'), { className: 'ramp' });
    bar.style.background = `linear-gradient(to right, ${ramp.stops.join(', ')})`;
    items.push(bar, Object.assign(document.createElement('div'), { className: 'ramp-ends', textContent: `${ramp.min} … ${ramp.max}` }));
  }
  if (none) items.push(Object.assign(rowOf({ value: 'no value', colour: none }), { className: 'none' }));
  element.replaceChildren(...items);
}
