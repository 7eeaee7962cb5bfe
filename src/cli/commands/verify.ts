// `mudm-tiles verify DIR`: every check of a built pyramid; exit 0 when it holds, 1 with the list of problems.
import { UsageError } from '../../report/errors.js';
import { formatProblems, openPyramidReader, verifyPyramid, type VerifyResult } from '../../inspect/index.js';
import type { CommandContext } from '../command.js';
import { EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE } from '../exit.js';

export const usage = 'DIR|FILE.pmtiles';

export const details =
  'Checks that the descriptor and every overview validate and match the layout, every tile decodes (JSON and PBF), ' +
  'JSON and PBF tiles agree feature for feature (ids, properties, layer, geometry in pixels), every tile and its ' +
  'features lie inside the grid, the bounds and the buffered tile, no tile below the finest zoom exceeds ' +
  'the budget the build held (from its report; --tile-budget checks another), no zoom directory lies outside minzoom–maxzoom, and build-report.json matches the files. ' +
  'Archives (FILE.pmtiles, or a DIR whose tileset.json lists archives) are checked tile by tile as directories are, ' +
  'and each archive\'s tile type and metadata (the descriptor) too. ' +
  'Exit 0: no problem; 1: problems (listed on stdout); 3: no readable tileset.json or archive.';

export async function run(ctx: CommandContext): Promise<number> {
  const { args, options, io } = ctx;
  if (args.length !== 1) throw new UsageError(`verify takes one pyramid directory, found ${args.length} arguments`);
  const reader = await openPyramidReader(args[0]);
  let result: VerifyResult;
  try {
    result = verifyPyramid(reader, { tileBudget: ctx.given.tileBudget });
  } finally {
    reader.close();
  }
  if (options.json) {
    io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else if (result.ok) {
    io.stdout.write(`${args[0]}: ok, ${result.checked.tiles} tiles and ${result.checked.features} features checked${result.notes.map((n) => `; ${n}`).join('')}\n`);
  } else {
    io.stdout.write(formatProblems(result));
    const total = Object.values(result.counts).reduce((a, b) => a + (b ?? 0), 0);
    io.stdout.write(`${args[0]}: ${total} problem${total === 1 ? '' : 's'} in ${result.checked.tiles} tiles checked\n`);
  }
  // A missing descriptor is an unreadable input, like any other command's: exit 3 rather than 1.
  if (result.counts['descriptor-unusable']) return EXIT_UNREADABLE;
  return result.ok ? EXIT_OK : EXIT_INVALID;
}
