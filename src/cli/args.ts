// argv → options of one command, checked against the option registry (types, choices, which command takes what).
import { OPTIONS, flagName, parseBytes, type Command, type OptionName, type OptionSpec, type Options } from '../options.js';
import { UsageError } from '../report/errors.js';
import { closest } from '../suggest.js';

export interface ParsedArgs {
  /** Only the options given on the command line; `resolveOptions` fills the rest. */
  options: Partial<Options>;
  positionals: string[];
}

const SPECS = OPTIONS as Record<OptionName, OptionSpec>;

/** The options a command accepts, by name. */
export function optionsOf(command: Command): [OptionName, OptionSpec][] {
  return (Object.entries(SPECS) as [OptionName, OptionSpec][]).filter(([, spec]) => spec.commands.includes(command));
}

/**
 * Parses `--kebab-case value`, `--kebab-case=value`, `-x value`, `-xVALUE`, clustered short booleans (`-qh`),
 * `--no-flag` for booleans, and `--` (everything after is positional). A lone `-` is positional (stdin).
 */
export function parseArgs(command: Command, argv: readonly string[]): ParsedArgs {
  const accepted = optionsOf(command);
  const byFlag = new Map<string, OptionName>(accepted.map(([name]) => [flagName(name), name]));
  const byShort = new Map<string, OptionName>();
  for (const [name, spec] of accepted) if (spec.short) byShort.set(spec.short, name);
  const options: Record<string, unknown> = {};
  const positionals: string[] = [];

  const set = (name: OptionName, raw: string, shownAs: string): void => {
    const spec = SPECS[name];
    const value = convert(spec, raw, shownAs);
    if (spec.type === 'list') options[name] = [...((options[name] as string[] | undefined) ?? []), value as string];
    else options[name] = value;
  };

  for (let k = 0; k < argv.length; k++) {
    const token = argv[k];
    if (token === '--') {
      positionals.push(...argv.slice(k + 1));
      break;
    }
    if (token === '-' || !token.startsWith('-')) {
      positionals.push(token);
      continue;
    }
    if (token.startsWith('--')) {
      const eq = token.indexOf('=');
      const flag = token.slice(2, eq < 0 ? undefined : eq);
      const inline = eq < 0 ? undefined : token.slice(eq + 1);
      const name = byFlag.get(flag);
      if (name === undefined && flag.startsWith('no-')) {
        const positive = byFlag.get(flag.slice(3));
        if (positive !== undefined && SPECS[positive].type === 'boolean') {
          if (inline !== undefined) throw new UsageError(`option --${flag} takes no value`);
          options[positive] = false;
          continue;
        }
      }
      if (name === undefined) throw unknownOption(command, `--${flag}`, [...byFlag.keys()].map((f) => `--${f}`));
      const spec = SPECS[name];
      if (spec.type === 'boolean') {
        options[name] = inline === undefined ? true : convert(spec, inline, `--${flag}`);
        continue;
      }
      if (inline !== undefined) {
        set(name, inline, `--${flag}`);
        continue;
      }
      set(name, takeValue(argv, ++k, `--${flag}`, spec), `--${flag}`);
      continue;
    }
    // Short options: -q, -qh, -o DIR, -oDIR, -o=DIR.
    for (let c = 1; c < token.length; c++) {
      const letter = token[c];
      const name = byShort.get(letter);
      if (name === undefined) {
        const shorts = [...byShort.keys()].map((s) => `-${s}`);
        throw unknownOption(command, `-${letter}`, shorts);
      }
      const spec = SPECS[name];
      if (spec.type === 'boolean') {
        options[name] = true;
        continue;
      }
      let rest = token.slice(c + 1);
      if (rest.startsWith('=')) rest = rest.slice(1);
      set(name, rest !== '' ? rest : takeValue(argv, ++k, `-${letter}`, spec), `-${letter}`);
      break;
    }
  }
  // Every command takes paths there: an empty one (`build "$IN"` with IN unset) would resolve to the working directory.
  const empty = positionals.indexOf('');
  if (empty >= 0) throw new UsageError(`argument ${empty + 1} is empty: ${command} takes a path there (an unset shell variable?)`);
  return { options: options as Partial<Options>, positionals };
}

function takeValue(argv: readonly string[], k: number, shownAs: string, spec: OptionSpec): string {
  const value = argv[k];
  // A following flag is almost always a forgotten value; negative numbers and `-` (stdin/stdout) are values.
  if (value === undefined || (value.startsWith('-') && value !== '-' && !/^-\d/.test(value))) {
    throw new UsageError(`option ${shownAs} needs a value${spec.arg ? ` (${spec.arg})` : ''}`);
  }
  return value;
}

function convert(spec: OptionSpec, raw: string, shownAs: string): unknown {
  switch (spec.type) {
    case 'boolean': {
      const v = raw.toLowerCase();
      if (['true', 'yes', '1', 'on'].includes(v)) return true;
      if (['false', 'no', '0', 'off'].includes(v)) return false;
      throw new UsageError(`option ${shownAs} is a switch: give it alone, or =true / =false, not '${raw}'`);
    }
    case 'integer': {
      const n = Number(raw);
      if (!/^[+-]?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n)) {
        throw new UsageError(`option ${shownAs} needs a whole number, got '${raw}'`);
      }
      return n;
    }
    case 'bytes': {
      const n = parseBytes(raw);
      if (n === undefined) throw new UsageError(`option ${shownAs} needs a size such as 512M, 1G or 1048576, got '${raw}'`);
      return n;
    }
    case 'string':
    case 'list':
      if (spec.choices && !spec.choices.includes(raw)) {
        throw new UsageError(`option ${shownAs} must be one of ${spec.choices.join(', ')}, got '${raw}'`);
      }
      return raw;
  }
}

function unknownOption(command: Command, flag: string, known: string[]): UsageError {
  const elsewhere = (Object.entries(SPECS) as [OptionName, OptionSpec][]).find(
    ([name, spec]) => `--${flagName(name)}` === flag || (spec.short !== undefined && `-${spec.short}` === flag),
  );
  if (elsewhere) {
    return new UsageError(`option ${flag} does not apply to ${command} (it is for ${elsewhere[1].commands.join(', ')})`);
  }
  const near = closest(flag, known);
  return new UsageError(`unknown option ${flag} for ${command}${near ? `; did you mean ${near}?` : ''}`);
}
