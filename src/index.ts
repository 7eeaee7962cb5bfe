// Library API of mudm-tiles: build pyramids, validate documents, and the data-model types.
export { buildPyramid, planShardedBuild, buildShard, finalizeShardedBuild, parsePlane, parsePlaneFields } from './pipeline.js';
export type { BuildIO, BuildReport, InputSpec, ProgressEvent, ZoomReport } from './pipeline.js';
export { OPTIONS, resolveOptions, type Options, type OptionName } from './options.js';
export { DirectorySink, MemorySink, type TileSink } from './io/sink.js';
export { DiskWorkDir, MemoryWorkDir, type WorkDir } from './io/workdir.js';
export { fileSource, memorySource, streamSource, readDocuments, type Source, type ReadEvent } from './io/read.js';
export * from './validate/index.js';
export type { Issue, Severity } from './validate/issue.js';
export * from './model/geometry.js';
export * from './model/feature.js';
export * from './model/multiscale.js';
export * from './model/descriptor.js';
export * from './model/vocabulary.js';
export { bbox, centroid } from './model/measure.js';
export { DataError, InputError, OutputError, UsageError, InterruptedError } from './report/errors.js';
