// `mudm-tiles serve DIR|FILE.pmtiles [--port N] [--cors ORIGIN]`: the pyramid and the viewer on 127.0.0.1 until SIGINT or SIGTERM.
import fs from 'node:fs';
import path from 'node:path';
import { holdsDescriptor } from '../../archive/foreign.js';
import { UsageError } from '../../report/errors.js';
import { startServer } from '../../serve.js';
import type { CommandContext } from '../command.js';
import { EXIT_OK } from '../exit.js';

export const usage = 'DIR|FILE.pmtiles';

export const details =
  'Serves DIR and, at /, a viewer: OpenLayers in pixel space reading tileset.json, layers coloured by featureClass ' +
  'or a chosen field, selectors for the t, c and z planes, a card with the properties of the feature under the ' +
  'pointer, and under the features the slide image when the descriptor lists one as its background asset (build ' +
  '--preview --image writes it; the quicklook PNGs never are). Only the regular files whose real ' +
  'path lies inside DIR are served (tiles, descriptors, previews), never .mudm-work, hidden or temporary files: ' +
  'anything else is 404. The tile URLs of the PMTiles archives that DIR/tileset.json lists are answered from them. ' +
  'FILE.pmtiles: one archive, its metadata as /tileset.json, its tiles at the tile URLs, the file itself under its ' +
  'name; the viewer opens it at /?tileset=NAME.pmtiles too. Files are served with byte ranges. Only 127.0.0.1 ' +
  'listens, with no CORS header unless --cors names the origin allowed to read. Ctrl-C stops it.';

export async function run(ctx: CommandContext): Promise<number> {
  const { args, options, io, log } = ctx;
  if (args.length !== 1) throw new UsageError(`serve takes one pyramid directory or PMTiles archive, found ${args.length} arguments`);
  const dir = args[0];
  const port = options.port;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535, found ${port}`);
  const server = await startServer({ root: dir, port, cors: options.cors });
  if (fs.statSync(dir).isDirectory()) {
    if (!fs.existsSync(path.join(dir, 'tileset.json'))) log.warn(`${dir} has no tileset.json yet: the viewer shows nothing until a build finishes there`, { event: 'no-descriptor-yet', dir });
  } else if (!holdsDescriptor(dir)) {
    log.warn(`${dir} was not written by mudm-tiles (its metadata is no tileset descriptor): its tiles are served at /{z}/{x}/{y} and its metadata as /tileset.json as they are, but the viewer cannot open it`, { event: 'not-a-pyramid-archive', file: dir });
  }
  io.stdout.write(`serving ${dir} at ${server.url} (viewer at ${server.url}, Ctrl-C to stop)\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const on = (sig: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
  await server.close();
  log.info(`${signal}: server stopped`);
  // Stopping a server with Ctrl-C is how it is meant to end, not a failure.
  return EXIT_OK;
}
