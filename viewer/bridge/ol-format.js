// `ol/format.js` for ol-pmtiles (mapped by the import map of index.html): the page's OpenLayers formats it uses.
export const { MVT } = window.ol.format;
