// Viewer of a mudm-tiles pyramid: OpenLayers (global `ol`, served at vendor/ol.js) reading tileset.json in pixel space.
//
// Pixel space: origin top-left, x right, y down; the world is a square of side S (a power of two). OpenLayers' map y
// grows upward, so the map shows pixel (x, y) at map coordinate (x, -y): the projection extent is [0, -S, S, 0] and
// the tile grid's origin is its top-left corner [0, 0], where OpenLayers numbers tile rows downward from 0, exactly
// as the pyramid's {y} does. The MVT format maps tile-local coordinates (y down) into each tile's map extent, so
// features land at (x, -y) with no further transform.

const ol = window.ol;

/** Everything that went wrong on the page, for people (the status line) and for tests. */
const errors = [];
const originalConsoleError = console.error.bind(console);
console.error = (...args) => {
  errors.push(args.map(String).join(' '));
  originalConsoleError(...args);
};
window.addEventListener('error', (e) => errors.push(`error: ${e.message}`));
window.addEventListener('unhandledrejection', (e) => errors.push(`unhandled rejection: ${e.reason && e.reason.message ? e.reason.message : String(e.reason)}`));

const $ = (id) => document.getElementById(id);

// Distinct colours for categories (Sasha Trubetskoy's list, the most separable first).
const PALETTE = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#bfef45', '#fabed4',
  '#469990', '#dcbeff', '#9a6324', '#fffac8', '#800000', '#aaffc3', '#808000', '#ffd8b1', '#000075', '#a9a9a9'];
// Viridis stops for numbers, from the field's minimum to its maximum.
const RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
const UNKNOWN = '#888888';
const PLANE_DIMS = ['t', 'c', 'z'];

function hashColour(value) {
  const s = String(value);
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return PALETTE[(h >>> 0) % PALETTE.length];
}

function rampColour(v, lo, hi) {
  const t = hi > lo ? Math.min(1, Math.max(0, (v - lo) / (hi - lo))) : 0.5;
  const f = t * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(f));
  const u = f - i;
  const c = RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * u));
  return `#${c.map((x) => x.toString(16).padStart(2, '0')).join('')}`;
}

function hexToRgba(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/** Resolves a URL template against a base without percent-encoding its {placeholders}. */
function resolveTemplate(template, base) {
  return new URL(template, base).href.replace(/%7B/gi, '{').replace(/%7D/gi, '}');
}

/** Fields of every layer merged: name → { type, enums (sorted strings), range [min, max] }. */
function collectFields(descriptor) {
  const out = new Map();
  for (const l of descriptor.vector_layers ?? []) {
    for (const [name, type] of Object.entries(l.fields ?? {})) {
      const f = out.get(name) ?? { type, enums: new Set(), range: null };
      for (const v of l.fieldenums?.[name] ?? []) f.enums.add(v);
      const r = l.fieldranges?.[name];
      if (Array.isArray(r) && r.length === 2 && typeof r[0] === 'number' && typeof r[1] === 'number') {
        f.range = f.range ? [Math.min(f.range[0], r[0]), Math.max(f.range[1], r[1])] : [r[0], r[1]];
      }
      out.set(name, f);
    }
  }
  for (const f of out.values()) f.enums = [...f.enums].sort();
  return out;
}

/** Which colour a value of the chosen field gets; the same function draws the legend. */
function colourer(fieldName, fields, layerIds) {
  if (fieldName === 'layer') {
    const index = new Map(layerIds.map((id, i) => [id, i]));
    return (v) => (index.has(v) ? PALETTE[index.get(v) % PALETTE.length] : hashColour(v));
  }
  const f = fields.get(fieldName);
  if (f && f.type === 'Number' && f.range) return (v) => (typeof v === 'number' ? rampColour(v, f.range[0], f.range[1]) : UNKNOWN);
  if (f && f.enums.length) {
    const index = new Map(f.enums.map((v, i) => [v, i]));
    return (v) => (v === undefined || v === null ? UNKNOWN : index.has(String(v)) ? PALETTE[index.get(String(v)) % PALETTE.length] : hashColour(v));
  }
  return (v) => (v === undefined || v === null ? UNKNOWN : hashColour(v));
}

async function start() {
  const params = new window.URLSearchParams(window.location.search);
  const tilesetUrl = new URL(params.get('tileset') ?? 'tileset.json', window.location.href).href;
  const response = await fetch(tilesetUrl);
  if (!response.ok) throw new Error(`${tilesetUrl}: HTTP ${response.status}`);
  const descriptor = await response.json();
  const template = resolveTemplate(descriptor.tiles[0], tilesetUrl);
  const dims = [...descriptor.tiles[0].matchAll(/\{([a-z]+)\}/g)].map((m) => m[1]).filter((n) => PLANE_DIMS.includes(n));
  const b = descriptor.bounds ?? [0, 0, 256, 256];
  const [minX, minY, maxX, maxY] = b.length === 10 ? [b[3], b[4], b[8], b[9]] : b;
  const planeLo = b.length === 10 ? { t: b[0], c: b[1], z: b[2] } : { t: 0, c: 0, z: 0 };
  const planeHi = b.length === 10 ? { t: b[5], c: b[6], z: b[7] } : { t: 0, c: 0, z: 0 };
  const side = 2 ** Math.ceil(Math.log2(Math.max(1, maxX, maxY)));
  const minZoom = descriptor.minzoom ?? 0;
  const maxZoom = descriptor.maxzoom ?? 0;
  const layerIds = (descriptor.vector_layers ?? []).map((l) => l.id);
  const fields = collectFields(descriptor);

  $('title').textContent = descriptor.name ?? tilesetUrl.replace(/\/tileset\.json$/, '');
  document.title = `${descriptor.name ?? 'pyramid'} — mudm-tiles viewer`;

  // ── state ──
  const center = descriptor.center ?? [];
  const plane = { t: planeLo.t, c: planeLo.c, z: planeLo.z };
  if (center.length === 6) [plane.t, plane.c, plane.z] = center;
  const hidden = new Set();
  let field = fields.has('featureClass') ? 'featureClass'
    : [...fields.entries()].find(([, f]) => f.type === 'String' && f.enums.length)?.[0] ?? 'layer';
  let colourOf = colourer(field, fields, layerIds);

  // ── map ──
  const projection = new ol.proj.Projection({ code: 'pixel', units: 'pixels', extent: [0, -side, side, 0] });
  const resolutions = [];
  for (let z = 0; z <= maxZoom; z++) resolutions.push(side / 256 / 2 ** z);
  const tileGrid = new ol.tilegrid.TileGrid({ extent: [0, -side, side, 0], origin: [0, 0], resolutions, tileSize: 256, minZoom });

  // The pyramid's template with the current plane filled in and its zoom placeholder {zlvl} renamed to OpenLayers'
  // {z}; {x} and {y} are OpenLayers' own, rows counted down from the top-left origin like the pyramid's.
  const planeUrl = () => template.replace(/\{([a-z]+)\}/g, (m, name) => (name === 'zlvl' ? '{z}' : PLANE_DIMS.includes(name) ? String(plane[name]) : m));
  const source = new ol.source.VectorTile({
    projection,
    tileGrid,
    format: new ol.format.MVT(),
    url: planeUrl(),
    wrapX: false,
    transition: 0,
  });
  source.on('tileloaderror', (e) => errors.push(`tile failed to load: ${e.tile && e.tile.getTileCoord ? e.tile.getTileCoord().join('/') : '?'}`));

  const styles = new Map();
  const styleFor = (colour, type) => {
    const key = `${colour}|${type}`;
    let s = styles.get(key);
    if (!s) {
      const stroke = new ol.style.Stroke({ color: colour, width: type === 'LineString' || type === 'MultiLineString' ? 2 : 1.25 });
      const fill = new ol.style.Fill({ color: hexToRgba(colour, 0.55) });
      s = type === 'Point' || type === 'MultiPoint'
        ? new ol.style.Style({ image: new ol.style.Circle({ radius: 3, fill: new ol.style.Fill({ color: colour }), stroke: new ol.style.Stroke({ color: '#0008', width: 0.5 }) }) })
        : new ol.style.Style({ stroke, fill });
      styles.set(key, s);
    }
    return s;
  };
  const layer = new ol.layer.VectorTile({
    source,
    style: (feature) => {
      const props = feature.getProperties();
      if (hidden.has(props.layer)) return null;
      return styleFor(colourOf(field === 'layer' ? props.layer : props[field]), feature.getType());
    },
  });

  const extent = [minX, -maxY, maxX, -minY];
  const view = new ol.View({
    projection,
    extent: [minX - (maxX - minX), -maxY - (maxY - minY), maxX + (maxX - minX), -minY + (maxY - minY)],
    maxResolution: (side / 256) * 2,
    minResolution: side / 256 / 2 ** maxZoom / 16,
    constrainOnlyCenter: true,
  });

  // ── background: the preview image of the plane, when the descriptor lists one ──
  const rasters = (descriptor.assets ?? []).filter((a) => a && a.role === 'raster' && typeof a.href === 'string');
  const background = new ol.layer.Image({ visible: rasters.length > 0 });
  const rasterFor = () => rasters.find((a) => dims.every((d) => a[d] === undefined || a[d] === plane[d])) ?? rasters[0];
  const showBackground = () => {
    const a = rasterFor();
    if (!a) return;
    const e = Array.isArray(a.bbox) && a.bbox.length === 4 ? [a.bbox[0], -a.bbox[3], a.bbox[2], -a.bbox[1]] : extent;
    background.setSource(new ol.source.ImageStatic({ url: new URL(a.href, tilesetUrl).href, imageExtent: e, projection }));
  };
  showBackground();

  const map = new ol.Map({ target: 'map', layers: [background, layer], view });
  // The panel covers the map's left side: the image is fitted beside it.
  const panelWidth = $('panel').getBoundingClientRect().right;
  view.fit(extent, { padding: [16, 48, 16, Math.round(panelWidth) + 16] });

  // ── controls ──
  const fieldSelect = $('field');
  for (const name of ['layer', ...[...fields.keys()].sort()]) {
    const o = document.createElement('option');
    o.value = name;
    o.textContent = name === 'layer' ? 'layer (vector layer)' : name;
    fieldSelect.append(o);
  }
  fieldSelect.value = field;
  const drawLegend = () => {
    const legend = $('legend');
    legend.replaceChildren();
    const f = fields.get(field);
    const values = field === 'layer' ? layerIds : f && f.enums.length ? f.enums.slice(0, 24) : [];
    for (const v of values) {
      const row = document.createElement('div');
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = colourOf(v);
      row.append(sw, document.createTextNode(v));
      legend.append(row);
    }
    if (f && f.type === 'Number' && f.range) legend.textContent = `${field}: ${f.range[0]} (purple) … ${f.range[1]} (yellow)`;
  };
  const setColourField = (name) => {
    field = name;
    fieldSelect.value = name;
    colourOf = colourer(field, fields, layerIds);
    drawLegend();
    layer.changed();
  };
  fieldSelect.addEventListener('change', () => setColourField(fieldSelect.value));
  drawLegend();

  const setPlane = (values) => {
    let changed = false;
    for (const d of dims) {
      if (values[d] !== undefined && values[d] !== plane[d]) { plane[d] = Number(values[d]); changed = true; }
      const sel = $(`plane-${d}`);
      if (sel) sel.value = String(plane[d]);
    }
    if (!changed) return;
    // A new URL is a new source key: OpenLayers drops the old plane's tiles and loads the new ones.
    source.setUrl(planeUrl());
    showBackground();
  };
  for (const d of dims) {
    const label = document.createElement('label');
    label.textContent = `${d} `;
    const sel = document.createElement('select');
    sel.id = `plane-${d}`;
    for (let v = planeLo[d]; v <= planeHi[d]; v++) {
      const o = document.createElement('option');
      o.value = String(v);
      o.textContent = String(v);
      sel.append(o);
    }
    sel.value = String(plane[d]);
    sel.addEventListener('change', () => setPlane({ [d]: Number(sel.value) }));
    label.append(sel);
    $('planes').append(label);
  }

  for (const id of layerIds) {
    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = true;
    box.addEventListener('change', () => {
      if (box.checked) hidden.delete(id); else hidden.add(id);
      layer.changed();
    });
    label.append(box, document.createTextNode(` ${id}`));
    $('layers').append(label);
  }
  if (rasters.length) {
    $('background-row').hidden = false;
    $('background').addEventListener('change', (e) => background.setVisible(e.target.checked));
  }

  // ── hover card ──
  const card = $('card');
  const featuresAtPixel = (pixel) => map.getFeaturesAtPixel(pixel, { layerFilter: (l) => l === layer, hitTolerance: 2 });
  const describe = (f) => {
    const props = { ...f.getProperties() };
    delete props.geometry;
    return { id: f.getId(), layer: props.layer, properties: props, type: f.getType() };
  };
  const showCard = (pixel) => {
    const found = featuresAtPixel(pixel);
    if (!found.length) { card.hidden = true; return; }
    const d = describe(found[0]);
    const table = document.createElement('table');
    const add = (k, v) => {
      const tr = document.createElement('tr');
      const th = document.createElement('th');
      const td = document.createElement('td');
      th.textContent = k;
      td.textContent = typeof v === 'string' ? v : JSON.stringify(v);
      tr.append(th, td);
      table.append(tr);
    };
    if (d.id !== undefined) add('id', d.id);
    add('layer', d.layer);
    for (const [k, v] of Object.entries(d.properties)) if (k !== 'layer') add(k, v);
    if (found.length > 1) add('', `+ ${found.length - 1} more here`);
    card.replaceChildren(table);
    card.hidden = false;
    const r = map.getTargetElement().getBoundingClientRect();
    card.style.left = `${Math.min(r.left + pixel[0] + 14, window.innerWidth - card.offsetWidth - 4)}px`;
    card.style.top = `${Math.min(r.top + pixel[1] + 14, window.innerHeight - card.offsetHeight - 4)}px`;
  };
  map.on('pointermove', (e) => {
    if (e.dragging) return;
    const [x, y] = e.coordinate;
    $('position').textContent = `x ${x.toFixed(1)}, y ${(-y).toFixed(1)} px`;
    showCard(e.pixel);
  });
  map.getViewport().addEventListener('mouseleave', () => { card.hidden = true; });

  // ── test and scripting helpers ──
  const idle = () => new Promise((resolve) => map.once('rendercomplete', () => resolve()));
  /** Page (CSS) position of image pixel (px, py): where to point or read the screen. */
  const toScreen = (px, py) => {
    const p = map.getPixelFromCoordinate([px, -py]);
    const r = map.getTargetElement().getBoundingClientRect();
    return [r.left + p[0], r.top + p[1]];
  };
  const featuresAt = (px, py) => {
    const p = map.getPixelFromCoordinate([px, -py]);
    return p ? featuresAtPixel(p).map(describe) : [];
  };
  const rendered = idle();
  map.render();
  await rendered;
  $('status').textContent = `${layerIds.length} layer(s), zooms ${minZoom}–${maxZoom}, ${maxX - minX} × ${maxY - minY} px`;
  return {
    map, view, source, layer, background, descriptor, side, plane, errors,
    featuresAt, toScreen, idle, setPlane, setColourField,
    colourOf: (v) => colourOf(v),
    /** Resolves once every tile of a view is loaded and drawn: after the next change, or now when nothing is pending. */
    settle: () => {
      const next = idle();
      map.render();
      return next;
    },
  };
}

const ready = start().catch((err) => {
  const status = $('status');
  status.textContent = `cannot show this pyramid: ${err.message}`;
  status.className = 'error';
  errors.push(String(err.message ?? err));
  throw err;
});

// Test and scripting handle: `ready` resolves once the first view is drawn; the helpers are filled in then.
window.__viewer = {
  errors,
  map: undefined,
  ready: ready.then((h) => {
    Object.assign(window.__viewer, h);
    return true;
  }),
  featuresAt: () => [],
};
