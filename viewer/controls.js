// The panel's controls made from the pyramid: the colour-by select, a select per plane dimension, a box per layer.

import { BY_LAYER } from './colours.js';

/** Fills `select` with the colour-by choices (the vector layer, then every field by name) and chooses `field`. */
export function fieldChoices(select, fields, field) {
  for (const name of [BY_LAYER, ...[...fields.keys()].sort()]) {
    const o = document.createElement('option');
    o.value = name;
    o.textContent = name === BY_LAYER ? 'layer (vector layer)' : name;
    select.append(o);
  }
  select.value = field;
}

/**
 * A labelled select (id `plane-<d>`) per plane dimension in `container`, of the values `lo[d]`…`hi[d]`, at `plane`'s;
 * a choice calls `choose({ [d]: value })`.
 */
export function planeSelects(container, dims, lo, hi, plane, choose) {
  for (const d of dims) {
    const label = document.createElement('label');
    label.textContent = `${d} `;
    const sel = document.createElement('select');
    sel.id = `plane-${d}`;
    for (let v = lo[d]; v <= hi[d]; v++) {
      const o = document.createElement('option');
      o.value = String(v);
      o.textContent = String(v);
      sel.append(o);
    }
    sel.value = String(plane[d]);
    sel.addEventListener('change', () => choose({ [d]: Number(sel.value) }));
    label.append(sel);
    container.append(label);
  }
}

/** A box per layer in `container`, ticked unless `hidden` holds it: a tick or untick updates `hidden`, then calls `changed()`. */
export function layerBoxes(container, layerIds, hidden, changed) {
  for (const id of layerIds) {
    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = !hidden.has(id);
    box.dataset.layer = id;
    box.addEventListener('change', () => {
      if (box.checked) hidden.delete(id); else hidden.add(id);
      changed();
    });
    label.append(box, document.createTextNode(` ${id}`));
    container.append(label);
  }
}

/** Ticks the boxes of `layerBoxes` in `container` as `hidden` now says (a hash that names other layers to hide). */
export function tickLayers(container, hidden) {
  for (const box of container.querySelectorAll('input[data-layer]')) box.checked = !hidden.has(box.dataset.layer);
}
