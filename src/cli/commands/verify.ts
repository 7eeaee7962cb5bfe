// `mudm-tiles verify DIR`: every check of a built pyramid; exit 0 when it holds, 1 with the list of problems.
import fs from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../../report/errors.js';
import { decodeHeader, HEADER_BYTES } from '../../archive/pmtiles-format.js';
import { formatProblems, openPyramidReader, problem, verifyPyramid, withoutFile, type PyramidReader, type VerifyResult } from '../../inspect/index.js';
import type { CommandContext } from '../command.js';
import { EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE } from '../exit.js';

export const usage = 'DIR|FILE.pmtiles';

export const details =
  'Checks that the descriptor and every overview validate and match the layout, every tile decodes (JSON and PBF), ' +
  'JSON and PBF tiles agree feature for feature (ids, properties, layer, geometry in pixels), the PBF tiles\' fields ' +
  'and values are among their layer\'s fields, fieldenums and fieldranges, every tile and its ' +
  'features lie inside the grid, the bounds and the buffered tile, no tile below the finest zoom exceeds ' +
  'the budget the build held (from its report; --tile-budget checks another), no zoom directory lies outside minzoom–maxzoom ' +
  'and every zoom inside it that the report (else the layers\' kept_fraction) says draws holds a tile, the features lie within the ' +
  'bounds, each overview agrees with tileset.json, and build-report.json (its tile counts and world) matches the files. ' +
  'Archives (FILE.pmtiles, or a DIR whose tileset.json lists archives) are checked tile by tile as directories are, ' +
  'and each archive\'s tile type and metadata (the descriptor) too. ' +
  'Exit 0: no problem; 1: problems (listed on stdout; an archive whose header reads but not its directories or metadata is one); 3: no readable tileset.json or archive.';

export async function run(ctx: CommandContext): Promise<number> {
  const { args } = ctx;
  if (args.length !== 1) throw new UsageError(`verify takes one pyramid directory, found ${args.length} arguments`);
  let result: VerifyResult;
  let reader: PyramidReader & { close(): void };
  try {
    reader = await openPyramidReader(args[0]);
  } catch (err) {
    // An archive whose header reads but whose directories or metadata do not is a damaged pyramid (exit 1, listed),
    // as one archive of a folder is; only what is no archive at all is unreadable (exit 3).
    if (!(err instanceof InputError) || !hasArchiveHeader(args[0])) throw err;
    const found = problem('archive-invalid', path.basename(args[0]), withoutFile(err.message, args[0]));
    result = { ok: false, problems: [found], counts: { 'archive-invalid': 1 }, checked: { tiles: 0, features: 0 }, notes: [] };
    return report(ctx, result);
  }
  try {
    result = verifyPyramid(reader, { tileBudget: ctx.given.tileBudget });
  } finally {
    reader.close();
  }
  return report(ctx, result);
}

/** Whether `file` starts with a PMTiles v3 header. */
function hasArchiveHeader(file: string): boolean {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const head = new Uint8Array(HEADER_BYTES);
      decodeHeader(head.subarray(0, fs.readSync(fd, head, 0, HEADER_BYTES, 0)));
      return true;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

function report({ args, options, io }: CommandContext, result: VerifyResult): number {
  // The notes (what was not checked, entries that are no tiles) matter as much beside problems: a size not checked
  // is a problem not looked for. They close the last line either way.
  const notes = result.notes.map((n) => `; ${n}`).join('');
  if (options.json) {
    io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else if (result.ok) {
    io.stdout.write(`${args[0]}: ok, ${result.checked.tiles} tiles and ${result.checked.features} features checked${notes}\n`);
  } else {
    io.stdout.write(formatProblems(result));
    const total = Object.values(result.counts).reduce((a, b) => a + (b ?? 0), 0);
    io.stdout.write(`${args[0]}: ${total} problem${total === 1 ? '' : 's'} in ${result.checked.tiles} tiles checked${notes}\n`);
  }
  // A missing descriptor is an unreadable input, like any other command's: exit 3 rather than 1.
  if (result.counts['descriptor-unusable']) return EXIT_UNREADABLE;
  return result.ok ? EXIT_OK : EXIT_INVALID;
}
