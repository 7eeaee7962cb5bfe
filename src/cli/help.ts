// Help texts, generated from the option registry and the command table so they cannot drift from what is parsed.
import { bytesText, flagName, type Command, type OptionSpec } from '../options.js';
import { optionsOf } from './args.js';
import { COMMANDS, type CommandInfo } from './commands/index.js';

const PROGRAM = 'mudm-tiles';
const WIDTH = 100;

export function generalHelp(): string {
  const nameWidth = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  const lines = [
    `Usage: ${PROGRAM} <command> [options] [arguments]`,
    '',
    'Tile pyramids (JSON, MVT/PBF, TileJSON 3.0.0 descriptor) from microscopy annotations in the micro data model.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(nameWidth)}${c.summary}`),
    '',
    `Run '${PROGRAM} <command> --help' for the options of a command, '${PROGRAM} --version' for the version.`,
    'Exit codes: 0 ok, 1 invalid data, 2 usage error, 3 input unreadable, 4 output problem, 5 internal error, 130 SIGINT, 143 SIGTERM.',
  ];
  return `${lines.join('\n')}\n`;
}

export function commandHelp(info: CommandInfo, override: { usage?: string; summary?: string; details?: string } = {}): string {
  const usage = override.usage ?? info.usage;
  const summary = override.summary ?? info.summary;
  const details = override.details ?? info.details;
  const rows = optionsOf(info.name)
    .sort(([a], [b]) => (a === 'help' ? 1 : b === 'help' ? -1 : 0))
    .map(([name, spec]) => [flagColumn(name, spec), describe(spec, info.name)] as const);
  const left = Math.min(34, Math.max(...rows.map(([f]) => f.length)) + 2);
  const lines = [`Usage: ${PROGRAM} ${info.name} [options] ${usage}`.trimEnd(), '', capitalise(summary) + '.'];
  if (details) lines.push('', ...wrap(details, WIDTH));
  lines.push('', 'Options:');
  for (const [flag, text] of rows) {
    const [first, ...rest] = wrap(text, WIDTH - left - 2);
    if (flag.length + 2 > left) {
      lines.push(`  ${flag}`);
      lines.push(`  ${' '.repeat(left)}${first}`);
    } else {
      lines.push(`  ${flag.padEnd(left)}${first}`);
    }
    for (const r of rest) lines.push(`  ${' '.repeat(left)}${r}`);
  }
  return `${lines.join('\n')}\n`;
}

function flagColumn(name: string, spec: OptionSpec): string {
  const long = `--${flagName(name)}`;
  const arg = spec.type === 'boolean' ? '' : ` ${spec.choices ? spec.choices.join('|') : (spec.arg ?? placeholder(spec))}`;
  return `${spec.short ? `-${spec.short}, ` : '    '}${long}${arg}`;
}

function placeholder(spec: OptionSpec): string {
  return spec.type === 'integer' ? 'N' : spec.type === 'bytes' ? 'BYTES' : 'VALUE';
}

function describe(spec: OptionSpec, command: Command): string {
  let text = spec.helpFor?.[command] ?? spec.help;
  if (spec.type === 'list') text += ' (repeatable)';
  const d = spec.default;
  // Machine-dependent defaults (functions) and "off" defaults say nothing useful; help texts that name their
  // default already are left alone.
  const trivial = d === undefined || typeof d === 'function' || d === false || (Array.isArray(d) && d.length === 0);
  if (!trivial && !/\bdefault\b/.test(text)) text += ` (default: ${spec.type === 'bytes' && typeof d === 'number' ? bytesText(d) : String(d)})`;
  return text;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line || out.length === 0) out.push(line);
  return out;
}
