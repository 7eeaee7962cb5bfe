// `ol/tilegrid.js` for ol-pmtiles (mapped by the import map of index.html): the page's OpenLayers tile-grid helpers.
export const { createXYZ, extentFromProjection } = window.ol.tilegrid;
