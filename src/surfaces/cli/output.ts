/**
 * Writing results: one JSON envelope on stdout in JSON mode; a table on stdout and
 * `Error:`/`Hint:` on stderr in table mode. Everything is redacted on the way out.
 */
import type { ZoteusError } from '../../core/errors.js';
import { redactedJson, redactValue, type Redactor } from '../../core/redact.js';
import type { CliIO, Format } from './io.js';
import { ansiStyle, plainStyle, renderObject, renderRows } from './table.js';

export interface Writer {
  format: Format;
  /** Writes an envelope (JSON) and returns the exact stdout bytes written. */
  envelope(envelope: Record<string, unknown>): string;
  /** Table mode rendering of a success (or dry-run) envelope. */
  table(data: Record<string, unknown>, rowsField: string | undefined, summary: string | undefined): string;
  error(error: ZoteusError, envelope: Record<string, unknown>): string;
  stderr(line: string): void;
  /** Raw text to stdout (help, a config value asked for by name). */
  raw(text: string): string;
  /** A tool's own human text (table mode), redacted, ending with a newline. */
  text(text: string): string;
}

export function createWriter(io: CliIO, format: Format, redact: Redactor, colour: boolean): Writer {
  const out = (text: string): string => {
    io.stdout.write(text);
    return text;
  };
  const style = colour ? ansiStyle : plainStyle;
  return {
    format,
    envelope(envelope) {
      return out(`${redactedJson(envelope, redact)}\n`);
    },
    table(data, rowsField, summary) {
      const clean = redactValue(data, redact);
      const rows = rowsField ? clean[rowsField] : undefined;
      let text: string;
      if (Array.isArray(rows)) {
        text = renderRows(rows as Record<string, unknown>[], style);
        if (summary) text += `${redact(summary)}\n`;
      } else {
        // A write's one-line summary says what changed; the fields follow.
        text = `${summary ? `${redact(summary)}\n` : ''}${renderObject(clean, style)}`;
      }
      return out(text);
    },
    error(error, envelope) {
      if (format === 'json') return out(`${redactedJson(envelope, redact)}\n`);
      io.stderr.write(`Error: ${redact(error.message)}\n`);
      if (error.hint) io.stderr.write(`Hint: ${redact(error.hint)}\n`);
      return '';
    },
    stderr(line) {
      io.stderr.write(`${redact(line)}\n`);
    },
    raw(text) {
      return out(text);
    },
    text(text) {
      const clean = redact(text);
      return out(clean.endsWith('\n') ? clean : `${clean}\n`);
    },
  };
}
