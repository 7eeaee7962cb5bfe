// Messages on stderr in the format --log asks for: plain text for people, JSON lines for workflow engines.
import type { TextSink } from './io.js';

export type LogFormat = 'text' | 'json';
export type LogLevel = 'error' | 'warning' | 'info';

export interface Logger {
  readonly format: LogFormat;
  /** `fields` go into JSON lines as they are; text lines show only the message. */
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
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
    log,
    error: (m, f) => log('error', m, f),
    warn: (m, f) => log('warning', m, f),
    info: (m, f) => log('info', m, f),
  };
}
