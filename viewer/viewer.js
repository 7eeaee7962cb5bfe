// Viewer of a mudm-tiles pyramid: OpenLayers (global `ol`, served at vendor/ol.js) reading tileset.json or a PMTiles
// archive (tiles.js) in pixel space.
//
// Pixel space: origin top-left, x right, y down; the world is a square of side S (a power of two). OpenLayers' map y
// grows upward, so the map shows pixel (x, y) at map coordinate (x, -y): the projection extent is [0, -S, S, 0] and
// the tile grid's origin is its top-left corner [0, 0], where OpenLayers numbers tile rows downward from 0, exactly
// as the pyramid's {y} does. The MVT format maps tile-local coordinates (y down) into each tile's map extent, so
// features land at (x, -y) with no further transform.

import { BY_LAYER, collectFields, colourer, defaultField, lacksValue, legendOf } from './colours.js';
import { describerOf, featuresUnder, hoverCard } from './card.js';
import { backgroundOf } from './background.js';
import { fieldChoices, layerBoxes, planeSelects, tickLayers } from './controls.js';
import { messageOf } from './descriptor.js';
import { dataExtent, fitter } from './extent.js';
import { keptLines } from './kept.js';
import { drawnFills, showLegend } from './legend.js';
import { foldable } from './panel.js';
import { emptyPlaneNote, StatusLine } from './status.js';
import { featureStyler, isChild } from './style.js';
import { readSmallCanvasesOnCpu } from './readback.js';
import { readViewState, writeViewState } from './state.js';
import { mvtFormat, nameOf, openPyramid } from './tiles.js';

const ol = window.ol;
readSmallCanvasesOnCpu(window.HTMLCanvasElement);

/** Everything that went wrong on the page, for people (the status line) and for tests. */
const errors = [];
const originalConsoleError = console.error.bind(console);
console.error = (...args) => {
  errors.push(args.map(String).join(' '));
  originalConsoleError(...args);
};
window.addEventListener('error', (e) => errors.push(`error: ${e.message}`));
window.addEventListener('unhandledrejection', (e) => errors.push(`unhandled rejection: ${messageOf(e.reason)}`));

const $ = (id) => document.getElementById(id);

async function start() {
  const params = new window.URLSearchParams(window.location.search);
  // `?tileset=` names a tileset.json or a PMTiles archive (`….pmtiles`), relative to this page or absolute.
  const given = params.get('tileset') || 'tileset.json';
  // A relative value is a path whose every character names itself ('#', '?' and '%' in a file name included); an
  // absolute URL is taken as written (a signed URL keeps its query and escapes).
  const asUrl = /^[a-z][a-z0-9+.-]*:/i.test(given) ? given : given.replace(/[%#?]/g, (c) => encodeURIComponent(c));
  // What was opened: a folder given, its tileset.json.
  const { descriptor, dims, tiles, plane: opened, servedName, url: tilesetUrl } = await openPyramid(ol, new URL(asUrl, window.location.href).href);
  const b = descriptor.bounds ?? [0, 0, 256, 256];
  const [minX, minY, maxX, maxY] = b.length === 10 ? [b[3], b[4], b[8], b[9]] : b;
  const planeLo = b.length === 10 ? { t: b[0], c: b[1], z: b[2] } : { t: 0, c: 0, z: 0 };
  const planeHi = b.length === 10 ? { t: b[5], c: b[6], z: b[7] } : { t: 0, c: 0, z: 0 };
  const side = 2 ** Math.ceil(Math.log2(Math.max(1, maxX, maxY)));
  const minZoom = descriptor.minzoom ?? 0;
  const maxZoom = descriptor.maxzoom ?? 0;
  const vectorLayers = descriptor.vector_layers ?? [];
  const layerIds = vectorLayers.map((l) => l.id);
  const fields = collectFields(descriptor);

  const title = descriptor.name ?? nameOf(tilesetUrl, servedName, opened !== undefined);
  $('title').textContent = title;
  document.title = `${title} — mudm-tiles viewer`;

  // ── state: the URL's hash first, then the descriptor's center, then the defaults ──
  const asked = readViewState(window.location.hash);
  const status = new StatusLine($('status'), `${layerIds.length} layer(s), zooms ${minZoom}–${maxZoom}, ${maxX - minX} × ${maxY - minY} px`, () => layer.getSource()?.refresh());
  const center = descriptor.center ?? [];
  const plane = { t: planeLo.t, c: planeLo.c, z: planeLo.z };
  if (center.length === 6) [plane.t, plane.c, plane.z] = center;
  const planeIn = (values) => {
    for (const d of dims) if (values[d] !== undefined && values[d] >= planeLo[d] && values[d] <= planeHi[d]) plane[d] = values[d];
  };
  const planeKey = () => dims.map((d) => plane[d]).join('/');
  if (opened) planeIn(opened);
  planeIn(asked.plane);
  const hidden = new Set((asked.hide ?? []).filter((id) => layerIds.includes(id)));
  const known = (name) => name === BY_LAYER || fields.has(name);
  // Links of earlier versions name the vector layer `layer`.
  if (asked.colour === 'layer' && !fields.has('layer')) asked.colour = BY_LAYER;
  let field = defaultField(fields, layerIds);
  if (asked.colour !== undefined && known(asked.colour)) field = asked.colour;
  /** A view asked for (a link, a hash typed) naming a plane, field or layer to hide this pyramid lacks: said, and left out. */
  const noteLacking = (s) => {
    for (const d of dims) if (s.plane[d] !== undefined && s.plane[d] !== plane[d]) status.planeNote(`no plane ${d}=${s.plane[d]} in this pyramid (${d} ${planeLo[d]}–${planeHi[d]}): showing ${d}=${plane[d]}`);
    if (s.colour !== undefined && !known(s.colour)) status.fieldNote(`no field "${s.colour}" in this pyramid: coloured by ${field}`);
    status.hideNote([...new Set(s.hide ?? [])].filter((id) => !layerIds.includes(id)));
  };
  noteLacking(asked);
  let colourOf = colourer(field, fields, layerIds, hidden);
  // "no value" is listed once a feature without one is drawn (or a layer shown lacks the field): every feature may have
  // one, and the descriptor does not say. Before, the row stood in every legend, a grey that nothing was drawn in.
  let noneDrawn = false;
  const fills = drawnFills();

  // ── map ──
  const projection = new ol.proj.Projection({ code: 'pixel', units: 'pixels', extent: [0, -side, side, 0] });
  const resolutionOf = (zoom) => side / 256 / 2 ** zoom;
  const resolutions = Array.from({ length: maxZoom + 1 }, (_, z) => resolutionOf(z));
  const tileGrid = new ol.tilegrid.TileGrid({ extent: [0, -side, side, 0], origin: [0, 0], resolutions, tileSize: 256, minZoom });

  // One source per plane: its tiles by URL ({x} and {y} are OpenLayers' own, rows counted down from the top-left
  // origin like the pyramid's), or out of the plane's archive.
  const planeSource = async () => {
    const s = await tiles.source({ ...plane }, { projection, tileGrid, wrapX: false, transition: 0 });
    s.on('tileloaderror', (e) => {
      const at = e.tile && e.tile.getTileCoord ? e.tile.getTileCoord().join('/') : '?';
      errors.push(`tile failed to load: ${at}${e.tile && e.tile.failure ? ` (${e.tile.failure})` : ''}`);
      // A plane switched away from may still finish loading: its failures are not the plane shown.
      if (layer.getSource() !== s) return;
      status.tileFailed(e.tile && e.tile.failure);
    });
    return s;
  };
  /**
   * The plane's source, or, when it cannot be made (its archive missing or unreadable), an empty one and the reason on
   * the status line: another plane's tiles are never left on screen under this plane's name.
   */
  const planeSourceOrEmpty = async () => {
    const name = dims.map((d) => `${d}=${plane[d]}`).join(', ');
    // A switch that ends after a later one says nothing about the plane shown.
    const key = planeKey();
    const current = () => planeKey() === key;
    try {
      const s = await planeSource();
      if (current()) status.planeProblem = undefined;
      return s;
    } catch (err) {
      const problem = `${name ? `plane ${name}` : 'the tiles'} cannot be shown: ${messageOf(err)}`;
      errors.push(problem);
      if (current()) status.planeProblem = problem;
      return new ol.source.VectorTile({ projection, tileGrid, format: mvtFormat(ol), tileUrlFunction: () => undefined });
    } finally {
      status.show();
    }
  };

  // Layers whose features say their QuPath type, in every tile or in the finer ones (`--coarse-fields`).
  const typed = new Set(vectorLayers.filter((l) => l.fields && Object.hasOwn(l.fields, 'objectType')).map((l) => l.id));
  const styleOf = featureStyler(ol, resolutionOf(minZoom), typed);
  const worldExtent = [minX, -maxY, maxX, -minY];
  // ── background: the slide image (background.js); over it, parts are filled as areas, so the stain shows through ──
  if (asked.background === false) $('background').checked = false;
  const backdrop = backgroundOf(ol, { assets: descriptor.assets, dims, plane, base: tilesetUrl, worldExtent, projection, box: $('background'), row: $('background-row') });

  // Tiles are asked for over the data's bounds only (a little wider, for strokes on the edge): outside them there is
  // nothing, and a static host answers each such tile with a 404.
  const margin = Math.max(maxX - minX, maxY - minY) / 64;
  const layer = new ol.layer.VectorTile({
    extent: [worldExtent[0] - margin, worldExtent[1] - margin, worldExtent[2] + margin, worldExtent[3] + margin],
    source: await planeSourceOrEmpty(),
    style: (feature, resolution) => {
      const props = feature.getProperties();
      if (hidden.has(props[BY_LAYER])) return null;
      if (!noneDrawn && lacksValue(field, fields, props[field])) noneDrawn = true;
      const colour = colourOf(props[field]), child = isChild(props, typed);
      const style = styleOf(feature, colour, resolution, child, backdrop.shown());
      // As the map fills it: a disc is filled whole, as a part is away from the image.
      fills.note(colour, styleOf.filledWhole(style));
      return style;
    },
  });
  // A replaced archive: the tiles on screen, read from the old one, are read again from the new one; the page's
  // layers, fields and planes stay those it opened with, and the status line says so.
  tiles.onChange((name) => {
    layer.getSource()?.refresh();
    status.note(`${name} was replaced since this page opened: reload the page to see its layers and fields`);
  });

  const view = new ol.View({
    projection,
    extent: [minX - (maxX - minX), -maxY - (maxY - minY), maxX + (maxX - minX), -minY + (maxY - minY)],
    maxResolution: resolutionOf(-1),
    minResolution: resolutionOf(maxZoom + 4),
    constrainOnlyCenter: true,
  });

  // ── fit: the extent of the plane's features, read once per plane from a few tiles (extent.js) ──
  const extents = new Map();
  const dataExtentOfPlane = () => {
    if (!extents.has(planeKey())) {
      const tile = (z, x, y) => tiles.bytes({ ...plane }, z, x, y);
      extents.set(planeKey(), dataExtent({ ol, projection, tile, minZoom, maxZoom, side, world: [maxX, maxY] }));
    }
    return extents.get(planeKey());
  };
  // A plane whose coarsest tiles hold none: features found on another plane clear the tiles template of doubt.
  const noteEmpty = async (extent) => {
    const key = planeKey();
    if (extent !== null) return;
    const others = await Promise.all([...extents].filter(([k]) => k !== key).map(([, e]) => e));
    if (planeKey() === key) status.planeNote(emptyPlaneNote(dims, plane, minZoom, others.some((e) => e)));
  };
  const firstExtent = asked.view ? undefined : await dataExtentOfPlane();
  await noteEmpty(firstExtent);

  const map = new ol.Map({ target: 'map', layers: [backdrop.layer, layer], view });
  const { fitTo, refit, padding: fitPadding, crowded } = fitter(ol, map, view, $('panel'));
  const fold = foldable($('panel'), $('fold'), crowded);
  const fitData = async () => fitTo((await dataExtentOfPlane()) ?? worldExtent);
  const showView = (v) => {
    view.setCenter([v.x, -v.y]);
    view.setResolution(view.getConstrainedResolution(resolutionOf(v.zoom)));
  };
  $('fit').addEventListener('click', () => { fitData(); });

  // ── the view in the URL, for sharing ──
  const pyramidZoom = () => Math.log2(side / 256 / view.getResolution());
  // A pyramid without a background image has no box to untick: a link's background=off is not passed on from it.
  const saveView = () => {
    const [x, y] = view.getCenter();
    const hash = writeViewState({ zoom: pyramidZoom(), x, y: -y, resolution: view.getResolution(), plane, dims, colour: field, hide: hidden, background: $('background-row').hidden || $('background').checked });
    if (hash !== window.location.hash) window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}${hash}`);
  };

  // ── honesty: at a zoom where the build thinned a layer, say which share of it is drawn ──
  const tileZoom = () => tileGrid.getZForResolution(view.getResolution(), layer.getSource().zDirection);
  const showKept = () => {
    const lines = keptLines(vectorLayers, tileZoom(), hidden);
    $('kept').replaceChildren(...lines.map((t) => Object.assign(document.createElement('div'), { textContent: t })));
    $('kept').hidden = lines.length === 0;
  };
  map.on('moveend', () => { saveView(); showKept(); });

  // ── controls ──
  const fieldSelect = $('field');
  fieldChoices(fieldSelect, fields, field);
  const drawLegend = () => showLegend($('legend'), legendOf(field, fields, layerIds, colourOf, hidden, noneDrawn), fills);
  // Drawn in the frame that drew the first feature without a value (before its render is complete).
  // So are swatches of colours first drawn (a nucleus's, filled whole).
  map.on('postrender', () => (fills.changed() || (noneDrawn && !$('legend').querySelector('.none'))) && drawLegend());
  // A Number field's ramp spans the layers ticked.
  const recolour = () => { colourOf = colourer(field, fields, layerIds, hidden); noneDrawn = false; fills.reset(); drawLegend(); layer.changed(); };
  const setColourField = (name) => {
    if (!known(name)) return;
    field = name;
    fieldSelect.value = name;
    status.fieldNote(undefined);
    recolour();
    saveView();
  };
  fieldSelect.addEventListener('change', () => setColourField(fieldSelect.value));
  drawLegend();

  // The plane's source is being made (an archive's header read): settle() waits for it.
  let switching = Promise.resolve();
  const setPlane = (values) => {
    const before = planeKey();
    planeIn(Object.fromEntries(Object.entries(values).map(([d, v]) => [d, Number(v)])));
    for (const d of dims) {
      const sel = $(`plane-${d}`);
      if (sel) sel.value = String(plane[d]);
    }
    if (planeKey() === before) return;
    status.planeAsked();
    backdrop.show();
    saveView();
    // A new source: OpenLayers drops the old plane's tiles and loads the new ones. Only the last plane asked for
    // gets its source, however the reads of their archives' headers end.
    const key = planeKey();
    switching = planeSourceOrEmpty().then((s) => {
      if (planeKey() !== key) return;
      layer.setSource(s);
      status.planeShown();
      return dataExtentOfPlane();
    }).then((e) => (planeKey() === key ? noteEmpty(e) : undefined));
  };
  planeSelects($('planes'), dims, planeLo, planeHi, plane, setPlane);
  layerBoxes($('layers'), layerIds, hidden, () => {
    recolour();
    showKept();
    saveView();
  });
  // Parts are restyled (see-through over the image, whole without it) and the legend follows; no tile is read again.
  backdrop.onToggle(() => { recolour(); saveView(); });

  /** The layers a hash unticks and its background, as the boxes show them. */
  const showAsked = (s) => {
    hidden.clear();
    for (const id of s.hide ?? []) if (layerIds.includes(id)) hidden.add(id);
    tickLayers($('layers'), hidden);
    const bg = $('background');
    if (!$('background-row').hidden && bg.checked !== (s.background !== false)) {
      bg.checked = s.background !== false;
      bg.dispatchEvent(new Event('change'));
    }
    recolour();
    showKept();
  };
  // A hash typed or pasted into the address bar moves this page without a reload.
  // What it asks for and the pyramid lacks is said, and the hash rewritten to the view shown, as on a load.
  window.addEventListener('hashchange', () => {
    const s = readViewState(window.location.hash);
    setPlane(s.plane);
    noteLacking(s);
    if (s.colour !== undefined) setColourField(s.colour);
    if (s.view) showView(s.view);
    showAsked(s);
    saveView();
  });

  // The first view, once the panel holds its controls (their height decides where the data fits on a phone), folded
  // to its title where they would cover most of the map.
  fold.fit();
  const firstPadding = asked.view ? undefined : fitTo(firstExtent ?? worldExtent);
  if (asked.view) showView(asked.view);

  // ── hover card: follows the pointer; a click pins it so that a long one can be scrolled ──
  const featuresAtPixel = (pixel) => featuresUnder(map, layer, pixel);
  const describe = describerOf(vectorLayers, tileZoom);
  hoverCard(map, $('card'), featuresAtPixel, (text) => { $('position').textContent = text; }, describe);

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
  saveView();
  showKept();
  status.ready();
  // The share-drawn box and the status line make the panel taller once drawn: on a small window the data fitted below
  // it went under it, and is fitted again. A window made small later (a phone turned, a window dragged narrow) folds it
  // too, and one made large again unfolds it: before, the panel kept its controls over most of the smaller map.
  fold.fit();
  // Folded first: the fit goes beside or below the panel as it is then.
  map.on('change:size', () => { fold.fit(); refit(); });
  if (firstPadding && fitPadding().join() !== firstPadding.join()) fitTo(firstExtent ?? worldExtent);
  return {
    map, view, layer, background: backdrop.layer, descriptor, side, plane, errors,
    featuresAt, toScreen, idle, setPlane, setColourField, tileZoom,
    colourOf: (v) => colourOf(v),
    field: () => field,
    zoom: pyramidZoom,
    /** Resolves once every tile of a view is loaded and drawn: after the next change, or now when nothing is pending. */
    settle: async () => {
      await switching;
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
  // Controls with nothing to act on would only look broken.
  $('panel').classList.add('failed');
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
// The failure is shown and in `errors` already: a script awaiting `ready` still sees it reject, the page no more.
window.__viewer.ready.catch(() => {});
