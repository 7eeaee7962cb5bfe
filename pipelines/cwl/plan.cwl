# CWL tool for `mudm-tiles plan`: one pass over the inputs that fixes world, zooms and work units of a sharded build.
cwlVersion: v1.2
class: CommandLineTool
label: mudm-tiles plan
doc: |
  Reads every input once and writes a new OUT directory that holds only the work directory
  (OUT/.mudm-work: plan.json and the records of every level-0 work unit). The build-shard steps
  tile from it; nothing outside the work directory is written yet.

# No DockerRequirement: the image's ENTRYPOINT is the CLI, and CWL runners (cwltool included) do not override
# ENTRYPOINT, so `baseCommand: [mudm-tiles, ...]` would run as `mudm-tiles mudm-tiles ...` inside it.
# Run with the package's bin on PATH (`cwltool --no-container`), see pipelines/README.md.
baseCommand: [mudm-tiles, plan]

requirements:
  InlineJavascriptRequirement: {}

arguments:
  # OUT is a directory passed from step to step: one archive file (-o NAME.pmtiles) has its work directory beside
  # it, outside what a step hands on. Archives go under OUT with `archive: pmtiles`.
  - prefix: -o
    valueFrom: |
      ${
        if (/\.pmtiles$/i.test(inputs.out_name)) throw new Error('out_name ' + inputs.out_name + ': the workflow hands OUT from step to step as a directory; for PMTiles archives set archive: pmtiles and a directory name');
        return inputs.out_name;
      }
  - prefix: --shards
    valueFrom: $(inputs.shards)

inputs:
  files:
    type: File[]
    doc: annotation files (FeatureCollection JSON, NDJSON, GeoJSON text sequences, .gz) or label masks (TIFF, PNG)
    inputBinding: {position: 1}
  shards:
    type: int
    doc: number of build-shard steps; the scatter runs exactly this many
  out_name:
    type: string
    default: pyramid
    doc: name of the output directory (the pyramid keeps it through build-shard and finalize)
  # Build options: each maps to the CLI option of the same name (options.ts); unset ones keep the CLI's defaults.
  strict: {type: boolean?, inputBinding: {prefix: --strict}}
  layer: {type: string?, inputBinding: {prefix: --layer}}
  layer_by: {type: string?, inputBinding: {prefix: --layer-by}}
  nucleus_features: {type: boolean?, inputBinding: {prefix: --nucleus-features}}
  mask_features: {type: string?, inputBinding: {prefix: --mask-features}}
  fields: {type: string?, inputBinding: {prefix: --fields}}
  coarse_fields: {type: string?, inputBinding: {prefix: --coarse-fields}}
  fields_from_zoom: {type: int?, inputBinding: {prefix: --fields-from-zoom}}
  plane_field: {type: string?, inputBinding: {prefix: --plane-field}}
  image_size: {type: string?, inputBinding: {prefix: --image-size}}
  min_zoom: {type: int?, inputBinding: {prefix: --min-zoom}}
  max_zoom: {type: int?, inputBinding: {prefix: --max-zoom}}
  format: {type: string?, inputBinding: {prefix: --format}}
  archive:
    type: string?
    inputBinding: {prefix: --archive}
    doc: |
      pmtiles: one PMTiles archive per plane and format under OUT. The shards then hand on their archive parts (one
      file per shard and archive) instead of trees of tiles, which runners list, copy and merge file by file.
  tile_compression:
    type: string?
    inputBinding: {prefix: --tile-compression}
    doc: auto, none or gzip, how archives store their tiles (with archive pmtiles); the shards and finalize follow the plan.
  name: {type: string?, inputBinding: {prefix: --name}}
  description: {type: string?, inputBinding: {prefix: --description}}
  attribution: {type: string?, inputBinding: {prefix: --attribution}}
  version: {type: string?, inputBinding: {prefix: --version}}
  base_url: {type: string?, inputBinding: {prefix: --base-url}}
  tile_budget: {type: string?, inputBinding: {prefix: --tile-budget}}
  lod: {type: string?, inputBinding: {prefix: --lod}}
  unit_size: {type: int?, inputBinding: {prefix: --unit-size}}
  memory_budget: {type: string?, inputBinding: {prefix: --memory-budget}}
  workers: {type: int?, inputBinding: {prefix: --workers}}
  log: {type: string?, inputBinding: {prefix: --log}}

outputs:
  plan:
    type: Directory
    doc: OUT with its work directory; every shard starts from a copy of it
    outputBinding:
      glob: $(inputs.out_name)
  shard_indexes:
    type: int[]
    doc: 0..shards-1, what the workflow scatters build-shard over (scatter needs an array before the step runs)
    outputBinding:
      outputEval: |
        ${
          var out = [];
          for (var i = 0; i < inputs.shards; i++) out.push(i);
          return out;
        }
