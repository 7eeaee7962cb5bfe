// The command table: names, one-line summaries and usage for help, and a lazy loader of ./<name>.js for each.
//
// To add a command's implementation, create src/cli/commands/<name>.ts exporting `run(ctx)` (see ../command.ts):
// nothing here needs editing. Loading on demand keeps `validate` from paying for the worker pool, sharp and friends.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from '../../options.js';
import type { CommandModule } from '../command.js';

export interface CommandInfo {
  name: Command;
  summary: string;
  /** Arguments after the options, for the usage line. */
  usage: string;
  /** A paragraph for `--help`. */
  details?: string;
}

export const COMMANDS: readonly CommandInfo[] = [
  {
    name: 'validate',
    summary: 'check documents against the data-model and descriptor specification',
    usage: 'FILE|DIR...',
    details:
      'Checks FeatureCollections (any size, streamed one feature at a time), NDJSON and GeoJSON Text Sequences, bare ' +
      'Features and geometries, and tileset descriptors (documents with tilejson). Use - for stdin; .gz is read as is. ' +
      'A directory gives its data files as build reads them (.json, .geojson, .ndjson, ... in name order; images, ' +
      'hidden files and sub-folders passed over), each validated and reported on its own. ' +
      'Exit 0: valid (warnings allowed); 1: a document is invalid; 2: usage error; 3: a file is unreadable or not JSON.',
  },
  {
    name: 'build',
    summary: 'build a tile pyramid (JSON and PBF tiles, TileJSON descriptor) from annotation files',
    usage: 'FILE... -o DIR|FILE.pmtiles',
  },
  { name: 'plan', summary: 'split a build into work units and shards for many machines', usage: 'FILE... -o DIR --shards N' },
  { name: 'build-shard', summary: 'tile the work units of one shard of a planned build', usage: 'DIR --shard I' },
  { name: 'finalize', summary: 'write descriptors and overviews once every shard of a planned build is done', usage: 'DIR' },
  { name: 'inspect', summary: 'summarise a pyramid (a directory or archives): zooms, tiles, layers, sizes', usage: 'DIR|FILE.pmtiles' },
  { name: 'verify', summary: 'check a pyramid (a directory or archives): every tile decodes, descriptors agree with the tiles', usage: 'DIR|FILE.pmtiles' },
  { name: 'serve', summary: 'serve a pyramid (a directory, archives, or one PMTiles archive) and the viewer on 127.0.0.1', usage: 'DIR|FILE.pmtiles' },
  { name: 'extract', summary: 'write a PMTiles archive (or a directory of them) out as a pyramid directory', usage: 'FILE.pmtiles|DIR -o OUT' },
];

export function commandInfo(name: string): CommandInfo | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** The command's module, or undefined while its file does not exist yet. */
export async function loadCommand(name: Command): Promise<CommandModule | undefined> {
  // Looking before importing, so that a missing import *inside* an existing command is reported, not mistaken for
  // "not implemented". `.ts` counts too: tests run the sources.
  const here = new URL('.', import.meta.url);
  if (!['js', 'ts'].some((ext) => existsSync(fileURLToPath(new URL(`${name}.${ext}`, here))))) return undefined;
  const mod: unknown = await import(`./${name}.js`);
  if (!isCommandModule(mod)) throw new Error(`src/cli/commands/${name}.ts must export an async run(ctx) function`);
  return mod;
}

function isCommandModule(mod: unknown): mod is CommandModule {
  return mod !== null && typeof mod === 'object' && typeof (mod as { run?: unknown }).run === 'function';
}
