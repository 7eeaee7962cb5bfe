// `ol/source/DataTile.js` for ol-pmtiles (mapped by the import map of index.html): the page's OpenLayers class.
export default window.ol.source.DataTile;
