// `mudm-tiles inspect DIR [TILE]`: a pyramid's summary, or one tile decoded to data-model JSON in global pixels.
import { UsageError } from '../../report/errors.js';
import { decodeTile, formatSummary, inspectPyramid, openPyramid, openPyramidReader, outsidePyramid, parseTileAddress, tileFileRoot, type TileFormat } from '../../inspect/index.js';
import type { CommandContext } from '../command.js';
import { EXIT_OK } from '../exit.js';

export const usage = 'DIR|FILE.pmtiles [Z/X/Y | Z/T/C/ZZ/X/Y] | DIR/Z/X/Y.pbf';

export const details =
  'With DIR alone: zooms, planes, layers and fields, tiles and bytes per zoom and format, features per zoom and the ' +
  'largest tiles (--json for the whole summary as JSON). With a tile address (plane values too, in tile-path order, ' +
  'only the dimensions the pyramid uses), or a tile file of a directory pyramid alone: that tile as a FeatureCollection in global pixel coordinates, decoded ' +
  'from its PBF file (tile-local coordinates mapped back to pixels) or, with --format json, its JSON file. ' +
  'Archives read as directories do: FILE.pmtiles, or a DIR whose tileset.json lists archives (--archive pmtiles).';

function tileFormat(value: string | undefined, given: boolean): TileFormat | undefined {
  if (!given) return undefined;
  if (value === 'json' || value === 'pbf') return value;
  throw new UsageError(`inspect reads a tile from one format: --format json or --format pbf, found "${value}"`);
}

export async function run(ctx: CommandContext): Promise<number> {
  const { args, options, io, log } = ctx;
  if (args.length < 1 || args.length > 2) throw new UsageError(`inspect takes a pyramid directory and optionally a tile address, found ${args.length} arguments`);
  // A tile file given alone (out/3/2/5.pbf) is read as that tile of the pyramid it lies in.
  const inTile = args.length === 1 ? tileFileRoot(args[0]) : undefined;
  const [dir, address] = inTile ? [inTile.root, inTile.address] : args;
  const reader = await openPyramidReader(dir);
  // A damaged archive hides tiles: what is read below may be short of them.
  for (const p of reader.problems ?? []) log.warn(`${p.path}: ${p.message} (mudm-tiles verify checks the whole pyramid)`, { event: p.code, path: p.path });
  try {
    if (address === undefined) {
      const summary = inspectPyramid(reader);
      for (const u of summary.unreadable ?? []) log.warn(`${u.path}: ${u.message} (mudm-tiles verify checks the whole pyramid)`, { event: 'tile-undecodable', path: u.path });
      io.stdout.write(options.json ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
      return EXIT_OK;
    }
    const pyramid = openPyramid(reader);
    const { z, x, y, plane, format: named } = parseTileAddress(pyramid, address);
    const outside = outsidePyramid(pyramid, { z, x, y, plane });
    if (outside) throw new UsageError(`tile ${address} is not in this pyramid: ${outside}`);
    // The file the address names (Z/X/Y.json), else --format's.
    const asked = tileFormat(options.format, ctx.given.format !== undefined);
    if (named && asked && named !== asked) throw new UsageError(`tile ${address} names a ${named} file, and --format says ${asked}: give one`);
    const tile = decodeTile(pyramid, z, x, y, plane, { format: named ?? asked });
    if (!tile.exists) log.warn(`${tile.path}: no such tile (an empty tile is not written: no features there)`, { event: 'no-such-tile', path: tile.path });
    io.stdout.write(`${JSON.stringify(tile.collection, null, 2)}\n`);
  } finally {
    reader.close();
  }
  return EXIT_OK;
}
