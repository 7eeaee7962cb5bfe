// What a character found where JSON wanted another is, in words: those hand-edited JSON needs (a trailing comma, quotes).

/** A character as messages quote it: a control character by its code point, which would not show. */
export function describeChar(c: string | undefined): string {
  if (c === undefined) return 'end of input';
  const code = c.codePointAt(0) ?? 0;
  return code < 0x20 || code === 0x7f ? `control character U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `'${c}'`;
}

/** What `c` is where a value is due (`afterComma`: in an array, after a comma), in the words hand-edited JSON needs. */
export function notAValue(c: string, afterComma: boolean): string {
  if (c === ']' && afterComma) return "unexpected ']' after ',' (trailing comma)";
  if (c === "'") return 'unexpected "\'": JSON strings take double quotes, not single ones';
  return `unexpected ${describeChar(c)}, expected a value`;
}

/** What is at `s[i]` where a property name is due (`afterComma`: after a comma), as `notAValue` says it. */
export function notAName(s: string, i: number, afterComma: boolean): string {
  const c = s[i];
  if (c === '}' && afterComma) return "unexpected '}' after ',' (trailing comma)";
  if (c === "'") return 'unexpected "\'": a property name takes double quotes, not single ones';
  const bare = /^[A-Za-z_$][\w$]*/.exec(s.slice(i, i + 64))?.[0];
  if (bare !== undefined) return `property name ${bare} without quotes: JSON takes it in double quotes, "${bare}"`;
  return `unexpected ${describeChar(c)}, expected a double-quoted property name`;
}
