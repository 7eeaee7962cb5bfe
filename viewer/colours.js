// Colours of the viewer: the fields a descriptor declares, which colour a value gets, the default colour-by, the legend.

// Distinct colours for categories (Sasha Trubetskoy's list, the most separable first).
const PALETTE = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#bfef45', '#fabed4',
  '#469990', '#dcbeff', '#9a6324', '#fffac8', '#800000', '#aaffc3', '#808000', '#ffd8b1', '#000075', '#a9a9a9'];
// Viridis stops for numbers, from the field's minimum to its maximum.
const RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
const UNKNOWN = '#888888';
/** Below this RGB distance two colours are easily confused on a map. */
const NEAR = 100;
/**
 * The pseudo-field that colours by vector layer (the colour-by when the data has no categorical field), and the
 * property the MVT format puts each feature's layer name in: not OpenLayers' default `layer`, which would hide a
 * data field of that name. A link of earlier versions says `colour=layer`.
 */
export const BY_LAYER = '(layer)';
const LEGEND_ROWS = 24;

function hashColour(value, palette = PALETTE) {
  const s = String(value);
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return palette[(h >>> 0) % palette.length];
}

function rampColour(v, lo, hi) {
  const t = hi > lo ? Math.min(1, Math.max(0, (v - lo) / (hi - lo))) : 0.5;
  const f = t * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(f));
  const u = f - i;
  const c = RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * u));
  return `#${c.map((x) => x.toString(16).padStart(2, '0')).join('')}`;
}

/** `#rrggbb` (lower case) from `#rgb` or `#rrggbb`; undefined for anything else, so a bad colour never reaches the canvas. */
function normalHex(colour) {
  if (typeof colour !== 'string') return undefined;
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(colour.trim());
  if (!m) return undefined;
  const h = m[1].length === 3 ? [...m[1]].map((c) => c + c).join('') : m[1];
  return `#${h.toLowerCase()}`;
}

const rgb = (hex) => [16, 8, 0].map((shift) => (parseInt(hex.slice(1), 16) >> shift) & 255);
const distance = (a, b) => Math.hypot(...rgb(a).map((c, i) => c - rgb(b)[i]));

export function hexToRgba(hex, alpha) {
  return `rgba(${rgb(hex).join(', ')}, ${alpha})`;
}

/**
 * Fields of every layer merged: name → { type, enums (sorted strings), ranges (layer id → [min, max]), colours
 * (value → #rrggbb), valuesOf (layer id → the values it lists or colours) }.
 * Names are taken whole: `classification.name` and `measurements.Cell: Area` are plain PBF property names.
 * `colours` comes from the layer's foreign member `fieldcolors` ({ field: { value: colour } }), the data's own class
 * colours (QuPath's); the first layer to name a value's colour wins.
 */
export function collectFields(descriptor) {
  const out = new Map();
  for (const l of descriptor.vector_layers ?? []) {
    for (const [name, type] of Object.entries(l.fields ?? {})) {
      const f = out.get(name) ?? { type, enums: new Set(), ranges: new Map(), colours: new Map(), valuesOf: new Map() };
      const own = new Set();
      f.valuesOf.set(l.id, own);
      for (const v of l.fieldenums?.[name] ?? []) { f.enums.add(String(v)); own.add(String(v)); }
      const r = l.fieldranges?.[name];
      if (Array.isArray(r) && r.length === 2 && typeof r[0] === 'number' && typeof r[1] === 'number') f.ranges.set(l.id, [r[0], r[1]]);
      const given = l.fieldcolors?.[name];
      if (given && typeof given === 'object') {
        for (const [value, colour] of Object.entries(given)) {
          const hex = normalHex(colour);
          if (hex) own.add(value);
          if (hex && !f.colours.has(value)) f.colours.set(value, hex);
        }
      }
      out.set(name, f);
    }
  }
  for (const f of out.values()) f.enums = [...f.enums].sort();
  return out;
}

/**
 * Colour-by on open: a field with colours of its own, else a String field with enums (featureClass first) of two values
 * or more, else the layer when there are several, else a field of one value, else the layer. A field every feature
 * shares one value of tells nothing: with layers split by class (`--layer-by class`), featureClass "cell" drew every
 * class in one red, and the split could only be seen by choosing another field.
 */
export function defaultField(fields, layerIds = []) {
  const entries = [...fields.entries()];
  const coloured = entries.find(([, f]) => f.colours.size > 0);
  if (coloured) return coloured[0];
  // A field named "" (an empty property key) is no choice a person would make.
  const categorical = entries.filter(([name, f]) => f.type === 'String' && f.enums.length && name !== '');
  // What classes features, by the names data models and QuPath give it, before any other field of few values.
  const pick = (list) => ['featureClass', 'classification.name', 'objectType'].map((n) => list.find(([name]) => name === n)).find(Boolean) ?? list[0];
  const telling = pick(categorical.filter(([, f]) => f.enums.length > 1));
  if (telling) return telling[0];
  if (layerIds.length > 1) return BY_LAYER;
  return pick(categorical)?.[0] ?? BY_LAYER;
}

/**
 * Values of a categorical field, in legend order: those with given colours and the enums (a Bool's two), sorted;
 * with layers `hidden`, those of the layers shown (all when every one is hidden), so an unticked layer's classes leave
 * the legend.
 */
function categories(f, hidden = new Set()) {
  if (f.type === 'Bool') return ['false', 'true'];
  const shown = [...f.valuesOf].filter(([id]) => !hidden.has(id));
  if (hidden.size === 0 || shown.length === 0) return [...new Set([...f.colours.keys(), ...f.enums])].sort();
  return [...new Set(shown.flatMap(([, values]) => [...values]))].sort();
}

/** The layers a legend lists: those shown, or all when every one is hidden. */
function shownLayers(layerIds, hidden) {
  const shown = layerIds.filter((id) => !hidden.has(id));
  return shown.length ? shown : layerIds;
}

/**
 * The range a Number field's ramp spans: that of the layers not `hidden` (of every layer when all are). Cells' areas
 * (80–1,000 px²) beside their nuclei's (4–180) left every nucleus in the ramp's first fifth, one dark purple, even
 * with the cells unticked.
 */
function rampRange(f, hidden) {
  const all = [...f.ranges];
  const shown = all.filter(([id]) => !hidden.has(id));
  const ranges = (shown.length ? shown : all).map(([, r]) => r);
  return ranges.length ? [Math.min(...ranges.map((r) => r[0])), Math.max(...ranges.map((r) => r[1]))] : null;
}

/** Which colour a value of the chosen field gets, the layers in `hidden` left out; the same function draws the legend. */
export function colourer(fieldName, fields, layerIds, hidden = new Set()) {
  if (fieldName === BY_LAYER) {
    const index = new Map(layerIds.map((id, i) => [id, i]));
    return (v) => (index.has(v) ? PALETTE[index.get(v) % PALETTE.length] : hashColour(v));
  }
  const f = fields.get(fieldName);
  const range = f && f.type === 'Number' ? rampRange(f, hidden) : null;
  if (range) return (v) => (typeof v === 'number' ? rampColour(v, range[0], range[1]) : UNKNOWN);
  // Palette colours go to the values without a given colour, in sorted order, so they stay the same across reloads;
  // palette colours close to a given one are left out, so that a class without a colour is not taken for one with,
  // hashed ones too (values the descriptor does not list).
  const given = f ? [...f.colours.values()] : [];
  const free = PALETTE.filter((p) => given.every((g) => distance(p, g) > NEAR));
  const palette = free.length ? free : PALETTE;
  const index = new Map((f ? categories(f).filter((v) => !f.colours.has(v)) : []).map((v, i) => [v, i]));
  return (v) => {
    if (v === undefined || v === null) return UNKNOWN;
    const s = String(v);
    return f?.colours.get(s) ?? (index.has(s) ? palette[index.get(s) % palette.length] : hashColour(s, palette));
  };
}

/**
 * The values of `values` the data gives one colour, or colours nearer than NEAR: `[{ values, near }]`, `near` when
 * not all are the very same. They are kept as the data gives them (QuPath gives every "…: Positive" class one red,
 * every "…: Negative" one blue, and users chose the rest), so the legend says which share.
 */
function sharedColours(values, f) {
  const given = values.filter((v) => f?.colours.has(v)).map((v) => ({ v, hex: f.colours.get(v) }));
  // Joined in groups, a colour near one of a group's in that group: at most 64 values have given colours.
  const parent = given.map((_, i) => i);
  const root = (i) => (parent[i] === i ? i : (parent[i] = root(parent[i])));
  for (let i = 0; i < given.length; i++) {
    for (let j = i + 1; j < given.length; j++) if (distance(given[i].hex, given[j].hex) < NEAR) parent[root(j)] = root(i);
  }
  const groups = new Map();
  given.forEach((g, i) => {
    const r = root(i);
    if (groups.has(r)) groups.get(r).push(g);
    else groups.set(r, [g]);
  });
  return [...groups.values()].filter((g) => g.length > 1).map((g) => ({ values: g.map(({ v }) => v), near: g.some(({ hex }) => hex !== g[0].hex) }));
}

/**
 * Whether a feature's value `v` of the colour-by is none, drawn grey: absent or null, or for a Number field with a
 * ramp, no number. Every feature has a vector layer.
 */
export function lacksValue(fieldName, fields, v) {
  if (fieldName === BY_LAYER) return false;
  if (v === undefined || v === null) return true;
  const f = fields.get(fieldName);
  return f !== undefined && f.type === 'Number' && f.ranges.size > 0 && typeof v !== 'number';
}

/**
 * The legend of a colour-by: `{ rows: [{ value, colour, shared? }], more, ramp, note, none, shared }`: one row per
 * category (at most LEGEND_ROWS, `more` counts the rest; a row's `shared`, from 1, is its entry in `shared`,
 * `[{ count, near }]`, when the data gives it the colour of another value, or one nearly so), or for a Number field
 * its range and the ramp's colours from its minimum to its maximum. A field whose values the descriptor does not list (too many to enumerate) has a `note` instead of rows;
 * `none` is the colour of features without a value of the field, when some are drawn (`noneDrawn`) or a layer shown
 * lacks the field, else null (as for the vector layer, which every feature has).
 */
export function legendOf(fieldName, fields, layerIds, colourOf, hidden = new Set(), noneDrawn = false) {
  const f = fields.get(fieldName);
  const lacking = shownLayers(layerIds, hidden).some((id) => !f?.valuesOf.has(id));
  const none = fieldName !== BY_LAYER && (noneDrawn || lacking) ? UNKNOWN : null;
  const range = f && f.type === 'Number' ? rampRange(f, hidden) : null;
  if (range) {
    const [min, max] = range;
    const stops = RAMP.map((_, i) => colourOf(min + ((max - min) * i) / (RAMP.length - 1)));
    return { rows: [], more: 0, ramp: { min, max, stops }, note: null, none, shared: [] };
  }
  const values = fieldName === BY_LAYER ? shownLayers(layerIds, hidden) : f ? categories(f, hidden) : [];
  const note = values.length === 0 && fieldName !== BY_LAYER ? 'a colour per value (the pyramid does not list its values)' : null;
  const shared = fieldName === BY_LAYER ? [] : sharedColours(values, f);
  const mark = new Map(shared.flatMap((g, i) => g.values.map((v) => [v, i + 1])));
  const rows = values.slice(0, LEGEND_ROWS).map((value) => ({ value, colour: colourOf(value), ...(mark.has(value) ? { shared: mark.get(value) } : {}) }));
  return { rows, more: Math.max(0, values.length - LEGEND_ROWS), ramp: null, note, none, shared: shared.map((g) => ({ count: g.values.length, near: g.near })) };
}
