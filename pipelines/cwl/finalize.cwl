# CWL tool for `mudm-tiles finalize`: merges the shards' parts into one OUT, then checks, describes and cleans it.
cwlVersion: v1.2
class: CommandLineTool
label: mudm-tiles finalize
doc: |
  Every part is one shard's copy of OUT (see build-shard.cwl). They are merged by path into one writable OUT:
  directories are united; the plan and its level-0 records, which every part carries unchanged, are taken once
  (finalize reads the records again where the shards' tiles of a zoom pass the tile budget: it raises that zoom's
  thinning and tiles the zoom anew; without them it refuses). Any other file in two parts would mean two
  shards wrote the same tile, which the shard split rules out: the merge fails then rather than pick one. `mudm-tiles finalize` then
  refuses (exit 4) unless every shard's marker is there, tiles the coarse levels, writes the overview tiles,
  build-report.json and tileset.json, and removes the work directory: the output is the finished pyramid.

baseCommand: [mudm-tiles, finalize]

requirements:
  InlineJavascriptRequirement: {}
  # The merge walks every part's tree. Set for the tool, not only on the input: cwltool 3.1 ignores an input's
  # loadListing when the input is an array.
  LoadListingRequirement:
    loadListing: deep_listing
  InitialWorkDirRequirement:
    listing: |
      ${
        function merge(name, where, dirs) {
          var order = [];
          var seen = {};
          dirs.forEach(function (d) {
            (d.listing || []).forEach(function (e) {
              var s = seen[e.basename];
              var rel = where + e.basename;
              if (rel === '.mudm-work/spill') return;
              if (!s) {
                seen[e.basename] = { entry: e, dirs: e.class === 'Directory' ? [e] : null };
                order.push(e.basename);
              } else if (e.class === 'Directory' && s.dirs) {
                s.dirs.push(e);
              } else if (rel !== '.mudm-work/plan.json' && where !== '.mudm-work/level-0/') {
                throw new Error('two shards wrote ' + rel + ': the parts of a sharded build must be disjoint');
              }
            });
          });
          return {
            class: 'Directory',
            basename: name,
            listing: order.map(function (n) {
              var s = seen[n];
              return s.dirs ? merge(n, where + n + '/', s.dirs) : s.entry;
            })
          };
        }
        var name = inputs.parts[0].basename;
        return [{ entry: merge(name, '', inputs.parts), entryname: name, writable: true }];
      }

arguments:
  - position: 1
    valueFrom: $(inputs.parts[0].basename)

inputs:
  parts:
    type: Directory[]
    doc: the `part` of every build-shard step
  memory_budget: {type: string?, inputBinding: {prefix: --memory-budget, position: 2}}
  log: {type: string?, inputBinding: {prefix: --log, position: 2}}

outputs:
  pyramid:
    type: Directory
    outputBinding:
      glob: $(inputs.parts[0].basename)
