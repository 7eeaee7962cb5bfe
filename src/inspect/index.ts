// Reading built pyramids back: inspect (summary), decode (a tile as data-model JSON), verify (a list of problems).
export { directoryReader, memoryReader, tileFileRoot, type PyramidReader } from './reader.js';
export { ArchiveReader, openPyramidReader } from './archive-reader.js';
export { openPyramid, outsidePyramid, parseTileAddress, listTiles, type Pyramid, type TileRef, type TileFormat } from './layout.js';
export { decodeTile, decodePbf, pbfToFeature, classifyRings, type DecodedTile, type DecodeOptions, type PbfFeature, type PbfLayer } from './decode.js';
export { inspectPyramid, formatSummary, type PyramidSummary, type InspectOptions, type LayerSummary, type ZoomSummary } from './summary.js';
export { verifyPyramid, formatProblems, type Problem, type ProblemCode, type VerifyOptions, type VerifyResult } from './verify.js';
export { problem, withoutFile } from './verify-problems.js';
