# CWL workflow of a sharded mudm-tiles build: plan, build-shard scattered over the shards, finalize.
cwlVersion: v1.2
class: Workflow
label: mudm-tiles sharded build
doc: |
  The same work units the local worker pool runs, spread over CWL steps: the union of the shards is
  byte-identical to `mudm-tiles build` on one machine with the same inputs and options.
  Run: cwltool --no-container pipelines/cwl/mudm-tiles.cwl pipelines/cwl/job.example.yml
  (with the package's bin on PATH; see pipelines/README.md for why not in the container image).

requirements:
  ScatterFeatureRequirement: {}
  InlineJavascriptRequirement: {}

inputs:
  files: File[]
  shards:
    type: int
    default: 2
  out_name:
    type: string
    default: pyramid
  # Build options (see plan.cwl): fixed by the plan, so every shard tiles with the same ones.
  strict: boolean?
  layer: string?
  layer_by: string?
  nucleus_features: boolean?
  mask_features: string?
  fields: string?
  coarse_fields: string?
  fields_from_zoom: int?
  plane_field: string?
  image_size: string?
  min_zoom: int?
  max_zoom: int?
  format: string?
  archive: string?
  tile_compression: string?
  name: string?
  description: string?
  attribution: string?
  version: string?
  base_url: string?
  tile_budget: string?
  lod: string?
  unit_size: int?
  memory_budget: string?
  # Worker threads per step: set it to the cores each step gets, as the CLI's default counts the host's cores.
  workers: int?
  log: string?

outputs:
  pyramid:
    type: Directory
    outputSource: finalize/pyramid

steps:
  plan:
    run: plan.cwl
    in:
      files: files
      shards: shards
      out_name: out_name
      strict: strict
      layer: layer
      layer_by: layer_by
      nucleus_features: nucleus_features
      mask_features: mask_features
      fields: fields
      coarse_fields: coarse_fields
      fields_from_zoom: fields_from_zoom
      plane_field: plane_field
      image_size: image_size
      min_zoom: min_zoom
      max_zoom: max_zoom
      format: format
      archive: archive
      tile_compression: tile_compression
      name: name
      description: description
      attribution: attribution
      version: version
      base_url: base_url
      tile_budget: tile_budget
      lod: lod
      unit_size: unit_size
      memory_budget: memory_budget
      workers: workers
      log: log
    out: [plan, shard_indexes]

  build_shard:
    run: build-shard.cwl
    scatter: shard
    in:
      plan: plan/plan
      shard: plan/shard_indexes
      workers: workers
      memory_budget: memory_budget
      log: log
    out: [part]

  finalize:
    run: finalize.cwl
    in:
      parts: build_shard/part
      memory_budget: memory_budget
      log: log
    out: [pyramid]
