// How a text line names its stable code: `message [code]`, written here once for warnings, notices and issue samples.

/**
 * The fields of a warning or notice: `event` is its stable code, the same word in a JSON log line (`"event"`) and
 * at the end of a text line, so a grep or a CI step filtering on it finds the line in either log format.
 */
export type CodedFields = { readonly event: string } & Record<string, unknown>;

/** `message [code]`: the code last, where the per-feature samples have always put theirs. */
export function withCode(message: string, code: string): string {
  return `${message} [${code}]`;
}
