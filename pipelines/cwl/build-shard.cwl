# CWL tool for `mudm-tiles build-shard`: tiles the work units of one shard in its own writable copy of OUT.
cwlVersion: v1.2
class: CommandLineTool
label: mudm-tiles build-shard
doc: |
  How shards share OUT. A CWL step may not write into another step's output: an input Directory is read-only,
  and `writable: true` gives the step its own copy (cwltool copies it; the spec allows an in-place update only
  as an optimisation under InplaceUpdateRequirement, which parallel shards writing one directory would race on).
  So each shard tiles into a private writable copy of the planned OUT and returns that copy as `part`: the
  plan it started from plus the files it created, its tiles, its unit markers (.mudm-work/units/0/*) and its
  shard marker (.mudm-work/shards/I.json). The tiles and markers of different shards are disjoint files (a
  level-0 unit belongs to exactly one shard, and each unit writes its own tiles), so finalize.cwl merges the
  parts by path without conflicts. This is correct on any runner, local or distributed, with or without
  containers; the price is one copy of the plan per shard, which is about the size of the inputs.

baseCommand: [mudm-tiles, build-shard]

requirements:
  InlineJavascriptRequirement: {}
  InitialWorkDirRequirement:
    listing:
      - entry: $(inputs.plan)
        entryname: $(inputs.plan.basename)
        writable: true

arguments:
  - position: 1
    valueFrom: $(inputs.plan.basename)

inputs:
  plan:
    type: Directory
    doc: OUT as plan.cwl wrote it
  shard:
    type: int
    inputBinding: {prefix: --shard, position: 2}
  workers: {type: int?, inputBinding: {prefix: --workers, position: 3}}
  memory_budget: {type: string?, inputBinding: {prefix: --memory-budget, position: 3}}
  log: {type: string?, inputBinding: {prefix: --log, position: 3}}

outputs:
  part:
    type: Directory
    doc: the shard's copy of OUT (its tiles and markers, plus the plan it started from)
    outputBinding:
      glob: $(inputs.plan.basename)
