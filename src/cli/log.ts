// Messages on stderr in the format --log asks for: plain text for people, JSON lines for workflow engines.
import { withCode, type CodedFields } from '../report/coded.js';
import type { TextSink } from './io.js';

export type LogFormat = 'text' | 'json';
export type LogLevel = 'error' | 'warning' | 'info';

export interface Logger {
  readonly format: LogFormat;
  /** `fields` go into JSON lines as they are; text lines show the message, a warning's or notice's code after it. */
  error(message: string, fields?: Record<string, unknown>): void;
  /** Something amiss: its code (`fields.event`) ends the text line, as the JSON line's `event`. */
  warn(message: string, fields: CodedFields): void;
  /** Something to know that is not amiss (an info line that -q hides): its code ends the text line too. */
  notice(message: string, fields: CodedFields): void;
  /** A command's own outcome (`planned …`, `shard 0: …`), which is no warning or notice and has no code. */
  info(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(stderr: TextSink, format: LogFormat = 'text', quiet = false): Logger {
  const log = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (quiet && level !== 'error') return;
    if (format === 'json') {
      stderr.write(`${JSON.stringify({ level, message, ...fields })}\n`);
    } else {
      stderr.write(`${level === 'info' ? '' : `${level}: `}${message}\n`);
    }
  };
  return {
    format,
    error: (m, f) => log('error', m, f),
    warn: (m, f) => log('warning', format === 'text' ? withCode(m, f.event) : m, f),
    notice: (m, f) => log('info', format === 'text' ? withCode(m, f.event) : m, f),
    info: (m, f) => log('info', m, f),
  };
}
