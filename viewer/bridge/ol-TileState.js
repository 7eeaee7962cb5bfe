// `ol/TileState.js` for ol-pmtiles (mapped by the import map of index.html). OpenLayers' single-file build does not
// expose this enum; its values are fixed (ol/TileState.js): IDLE 0, LOADING 1, LOADED 2, ERROR 3, EMPTY 4.
export default Object.freeze({ IDLE: 0, LOADING: 1, LOADED: 2, ERROR: 3, EMPTY: 4 });
