# CWL tool for `mudm-tiles build-shard`: tiles the work units of one shard and returns only what that shard wrote.
cwlVersion: v1.2
class: CommandLineTool
label: mudm-tiles build-shard
doc: |
  How shards share OUT. A CWL step may not write into another step's output: an input Directory is read-only,
  and `writable: true` gives the step its own copy (cwltool copies it; the spec allows an in-place update only
  as an optimisation under InplaceUpdateRequirement, which parallel shards writing one directory would race on).
  So each shard tiles into a private writable copy of the planned OUT, and returns as `part` only the files it
  created: its tiles, its unit markers (.mudm-work/units/0/*) and its shard marker (.mudm-work/shards/I.json),
  plus plan.json. The tiles and markers of different shards are disjoint files (a level-0 unit belongs to
  exactly one shard, and each unit writes its own tiles), so finalize.cwl merges the parts by path without
  conflicts. This is correct on any runner, local or distributed, with or without containers.

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
    doc: the shard's own files, laid out as in OUT
    outputBinding:
      glob: $(inputs.plan.basename)
      loadListing: deep_listing
      # The level-0 records are the plan's, unchanged and the bulk of the copy: leaving them out keeps them from
      # being carried into finalize once per shard. Everything else in the copy is this shard's or plan.json.
      outputEval: |
        ${
          var dir = self[0];
          var work = dir.listing.filter(function (e) { return e.basename === '.mudm-work'; })[0];
          var rest = dir.listing.filter(function (e) { return e.basename !== '.mudm-work'; });
          if (work) {
            rest.push({
              class: 'Directory',
              basename: '.mudm-work',
              listing: work.listing.filter(function (e) { return e.basename !== 'level-0' && e.basename !== 'spill'; })
            });
          }
          return { class: 'Directory', basename: dir.basename, listing: rest };
        }
