// `pmtiles` for ol-pmtiles and the viewer (mapped by the import map of index.html): the reader's single-file build,
// loaded by a classic script as the global `pmtiles` (its ES build imports fflate, one more file to vendor).
export const { PMTiles, EtagMismatch, SharedPromiseCache } = window.pmtiles;
