// The hover card of the viewer: one feature's id, layer and properties as a table people can read.

import { BY_LAYER } from './colours.js';

/** PBF ids from here up are the build's own: a QuPath nucleus made a feature has 2^52 + its cell's place in the input. */
const MADE_IDS = 2 ** 52;

/** Said under a PBF id shown in a layer whose features the build numbered where the input gave no id. */
export const MIXED_NOTE = 'in this layer, a feature without an id shows its place in the input (from 0) here';

/**
 * The id a person knows the feature by: the input's string id (kept as property `id`) before the PBF id; none where
 * the PBF id is the build's number, not an id the input gave: in a layer whose `feature_ids` (`from`) is "sequence"
 * (a QuPath 0.2 export showed "id 0", "id 1", … for objects that have no id), or a nucleus made a feature.
 */
export function featureId(props, pbfId, from) {
  if (props.id !== undefined && props.id !== null) return props.id;
  if (from === 'sequence') return undefined;
  return typeof pbfId === 'number' && pbfId >= MADE_IDS ? undefined : pbfId;
}

/** A value as text: numbers to 6 significant digits, everything else as written. */
function shown(v) {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Rows of the card: `[key, value]`, or `[heading]` before a group. Plain names come first in their order; dotted names
 * (`measurements.Cell: Area`, flattened from nested objects) are grouped under their first part, the rest as key.
 */
export function cardRows(feature) {
  // An id row may carry a note, shown under it: `[key, value, note]`.
  const plain = [feature.idNote ? ['id', feature.id, feature.idNote] : ['id', feature.id], ['layer', feature.layer]];
  const groups = new Map();
  for (const [k, v] of Object.entries(feature.properties)) {
    if (k === 'id') continue;
    // A data field named as the card's own row.
    if (k === 'layer') { plain.push(['layer (property)', v]); continue; }
    const dot = k.indexOf('.');
    if (dot <= 0 || dot === k.length - 1) { plain.push([k, v]); continue; }
    const head = k.slice(0, dot);
    if (!groups.has(head)) groups.set(head, []);
    groups.get(head).push([k.slice(dot + 1), v]);
  }
  const rows = plain.filter(([, v]) => v !== undefined);
  for (const [head, members] of groups) rows.push([head], ...members);
  return rows;
}

/** The card's table for the features under the pointer (the first one shown, the others counted). */
export function cardTable(features) {
  const table = document.createElement('table');
  const row = (cells, className) => {
    const tr = document.createElement('tr');
    if (className) tr.className = className;
    tr.append(...cells);
    table.append(tr);
  };
  const cell = (tag, text) => {
    const c = document.createElement(tag);
    c.textContent = text;
    return c;
  };
  for (const r of cardRows(features[0])) {
    if (r.length === 1) {
      const th = cell('th', r[0]);
      th.colSpan = 2;
      row([th], 'group');
    } else {
      row([cell('th', r[0]), cell('td', shown(r[1]))]);
    }
    if (r.length === 3) {
      // In a block of no width of its own (viewer.css): the note wraps to the card's width, never widens it.
      const td = document.createElement('td');
      td.colSpan = 2;
      td.append(cell('div', r[2]));
      row([td], 'note');
    }
  }
  const left = features[0].fieldsLeftOut;
  if (left) {
    const td = cell('td', `${left.count === 1 ? 'a field' : `up to ${left.count} fields`} more from zoom ${left.zoom}: zoom in to see ${left.count === 1 ? 'it' : 'them'}`);
    td.colSpan = 2;
    row([td], 'more');
  }
  if (features.length > 1) {
    const td = cell('td', `+ ${features.length - 1} more here`);
    td.colSpan = 2;
    row([td], 'more');
  }
  return table;
}

/**
 * The features of `layer` at `pixel` in the order the card names them: those the pointer is on before those only
 * within the hit tolerance, then the smallest box first. A cell inside a tumour region is named, not the region:
 * OpenLayers lists features tile by tile, and a region reaching into the tile it tested first came before the cell.
 */
export function featuresUnder(map, layer, pixel) {
  const only = (l) => l === layer;
  const on = new Set(map.getFeaturesAtPixel(pixel, { layerFilter: only, hitTolerance: 0 }));
  const size = (f) => {
    const [x0, y0, x1, y1] = f.getExtent();
    return (x1 - x0) * (y1 - y0);
  };
  const found = map.getFeaturesAtPixel(pixel, { layerFilter: only, hitTolerance: 2 });
  const key = new Map(found.map((f) => [f, [on.has(f) ? 0 : 1, size(f)]]));
  return found.sort((a, b) => key.get(a)[0] - key.get(b)[0] || key.get(a)[1] - key.get(b)[1]);
}

/**
 * Of a layer's `field_minzoom` (the fields --coarse-fields leaves out of coarser zooms), those tiles of `zoom` do not
 * carry: how many (the layer's: a feature may have fewer), and the coarsest zoom that carries one; undefined when it
 * carries them all, or when the feature (`props`) has one: it is from a finer tile still on screen while zooming out.
 */
export function fieldsLeftOut(fieldMinzoom, zoom, props = {}) {
  const later = fieldMinzoom ? Object.entries(fieldMinzoom).filter(([, z]) => zoom < z) : [];
  if (later.length === 0 || later.some(([name]) => Object.hasOwn(props, name))) return undefined;
  return { count: later.length, zoom: Math.min(...later.map(([, z]) => z)) };
}

/**
 * What the card and the scripting helpers say of an OpenLayers feature: id, layer, properties, type. `idsFrom`: layer
 * id → its `feature_ids` in the descriptor (absent in pyramids of earlier builds: a PBF id is shown as the id).
 * `leftOut`: layer id → the fields the zoom shown leaves out (`fieldsLeftOut`).
 */
export function describeFeature(f, idsFrom = new Map(), leftOut = () => undefined) {
  const { [BY_LAYER]: layer, ...props } = f.getProperties();
  // Features (not the render features tiles are read as) list their geometry among their properties; data may
  // have a field named `geometry` too.
  if (props.geometry && typeof props.geometry.getType === 'function') delete props.geometry;
  const from = idsFrom.get(layer);
  const d = { id: featureId(props, f.getId(), from), layer, properties: props, type: f.getType() };
  // A PBF id in a layer of both may be the input's or the build's: kept, with what it may be.
  if (from === 'mixed' && d.id !== undefined && (props.id === undefined || props.id === null)) d.idNote = MIXED_NOTE;
  const left = leftOut(layer, props);
  if (left) d.fieldsLeftOut = left;
  return d;
}

/**
 * `describeFeature` with the descriptor's vector layers: whose numbers each layer's PBF ids are, and which fields the
 * tiles of the zoom shown (`zoom()`) leave out.
 */
export function describerOf(vectorLayers, zoom = () => Infinity) {
  const idsFrom = new Map(vectorLayers.map((l) => [l.id, l.feature_ids]));
  const later = new Map(vectorLayers.map((l) => [l.id, l.field_minzoom]));
  return (f) => describeFeature(f, idsFrom, (layer, props) => fieldsLeftOut(later.get(layer), zoom(), props));
}

/** Gap in pixels between the pointer and the card, and between the card and the window's edge. */
const GAP = 14, EDGE = 4;

/**
 * Where a card of w × h goes for a pointer at (x, y) in a window of vw × vh: right of and below the pointer, flipped to
 * its left or above it where it would not fit, so that it never covers what the pointer is on; pushed inside the window
 * where one axis has no side it fits. Where neither has (a narrow window), it goes above or below the pointer, where
 * there is more room, its height held to that room (the third value: it scrolls once pinned).
 */
export function cardPlace(x, y, w, h, vw, vh) {
  const fits = (p, size, room) => p + GAP + size <= room - EDGE || p - GAP - size >= EDGE;
  const side = (p, size, room) => {
    if (p + GAP + size <= room - EDGE) return p + GAP;
    if (p - GAP - size >= EDGE) return p - GAP - size;
    return Math.max(EDGE, Math.min(p + GAP, room - size - EDGE));
  };
  if (fits(x, w, vw) || fits(y, h, vh)) return [side(x, w, vw), side(y, h, vh)];
  const above = y - GAP - EDGE, below = vh - EDGE - y - GAP;
  return above > below ? [side(x, w, vw), EDGE, above] : [side(x, w, vw), y + GAP, below];
}

/**
 * The card on `map`: it follows the pointer with the features under it (`featuresAt(pixel)`), a click pins it so that
 * a long one can be scrolled, Esc or a click elsewhere closes it; `showPosition` gets the pointer's image position,
 * `describe` makes a feature what the card shows (`describerOf`).
 */
export function hoverCard(map, card, featuresAt, showPosition, describe) {
  let pinned = false;
  const hide = () => { card.hidden = true; pinned = false; card.classList.remove('pinned'); };
  const show = (pixel) => {
    const found = featuresAt(pixel);
    if (!found.length) { hide(); return false; }
    const hint = Object.assign(document.createElement('div'), { className: 'hint' });
    card.replaceChildren(hint, cardTable(found.map(describe)));
    card.scrollTop = 0;
    card.hidden = false;
    hint.textContent = pinned ? 'Esc or a click elsewhere closes' : card.scrollHeight > card.clientHeight ? 'click to keep this card and scroll it' : '';
    const r = map.getTargetElement().getBoundingClientRect();
    card.style.maxHeight = '';
    const [left, top, height] = cardPlace(r.left + pixel[0], r.top + pixel[1], card.offsetWidth, card.offsetHeight, window.innerWidth, window.innerHeight);
    card.style.left = `${left}px`;
    card.style.top = `${top}px`;
    if (height !== undefined) card.style.maxHeight = `${height}px`;
    return true;
  };
  // Where the pointer last was over the map: a wheel zoom moves the image under it without moving it.
  let over = null;
  const follow = (pixel) => {
    const [x, y] = map.getCoordinateFromPixel(pixel);
    showPosition(`x ${x.toFixed(1)}, y ${(-y).toFixed(1)} px`);
    if (!pinned) show(pixel);
  };
  map.on('pointermove', (e) => {
    if (e.dragging) return;
    over = e.pixel;
    follow(e.pixel);
  });
  map.on('moveend', () => { if (over) follow(over); });
  map.on('singleclick', (e) => {
    hide();
    pinned = true;
    if (show(e.pixel)) card.classList.add('pinned');
  });
  window.addEventListener('keydown', (e) => { if (e.key === 'Escape') hide(); });
  map.getViewport().addEventListener('mouseleave', () => {
    over = null;
    showPosition('');
    if (!pinned) card.hidden = true;
  });
}
