// Library API of mudm-tiles: build pyramids, validate documents, and the data-model types.
export { buildPyramid, planShardedBuild, buildShard, finalizeShardedBuild } from './build/pipeline.js';
export type { BuildIO, InputSpec } from './build/context.js';
export type { Plane, Dim } from './tiling/space.js';
export type { Outliers } from './stages/plan.js';
export type { BuildReport, ProgressEvent, ZoomReport } from './report/types.js';
export {
  OPTIONS, resolveOptions, resolveBuildConfig, parsePlane, parsePlaneFields, parseImageSize,
  type Options, type OptionName, type BuildConfig, type ImageSize, type Formats, type ArchiveMode,
} from './options.js';
export { DirectorySink, MemorySink, type TileSink, type Removal, type SinkOpenOptions, type OutputLayout } from './io/sink.js';
export { DiskWorkDir, type WorkDir, type ProcessProbe } from './io/workdir.js';
export { MemoryWorkDir } from './io/workdir-memory.js';
// This machine's processes, as the CLI asks after them: `processes` in BuildIO, so --force and --resume spare a build still running.
export { localProcesses } from './cli/processes.js';
// Reading back what a build wrote: directories and archives alike.
export {
  openPyramidReader, ArchiveReader, memoryReader, inspectPyramid, verifyPyramid, formatSummary, formatProblems, decodeTile,
  type PyramidReader, type PyramidSummary, type VerifyResult, type VerifyOptions, type InspectOptions, type Problem, type ProblemCode, type DecodedTile,
} from './inspect/index.js';
export { extractArchives, type ExtractResult } from './inspect/extract.js';
export { openPmtiles, PmtilesArchive } from './archive/pmtiles-reader.js';
export { fileSource, memorySource, streamSource, readDocuments, type Source, type ReadEvent } from './io/read.js';
export type { FeatureSource } from './io/source.js';
export { maskSource } from './io/mask-source.js';
export * from './validate/index.js';
export { validateSource, validateTotals, type FileReport, type ValidateTotals, type ValidateHooks } from './validate/files.js';
export { sampleLine, type IssueSample } from './validate/tally.js';
export type { Issue, Severity } from './validate/issue.js';
export * from './model/geometry.js';
export * from './model/feature.js';
export * from './model/multiscale.js';
export * from './model/descriptor.js';
export * from './model/vocabulary.js';
export { bbox, centroid } from './model/measure.js';
export { DataError, InputError, ReadError, ImageError, OutputError, WorkStateError, UsageError, StateUsageError, InterruptedError, ValueTooLargeError } from './report/errors.js';
