/**
 * Writing results: one JSON envelope on stdout in JSON mode; a table on stdout and
 * `Error:`/`Hint:`/`Next:` on stderr in table mode. Everything is redacted on the way out.
 * Colour only on a TTY and never with NO_COLOR: stdout's decides for tables, stderr's for the
 * stderr lines (`Error:` red, `Hint:` and `Next:` dim).
 */
import type { ZoteusError } from '../../core/errors.js';
import type { TextDocument } from '../../core/tool.js';
import { redactedJson, redactValue, type Redactor } from '../../core/redact.js';
import { isDryRunPlan, planView } from './envelope.js';
import type { CliIO, Format } from './io.js';
import { ansiStyle, fitLine, plainStyle, renderObject, renderRows, wrapLine } from './table.js';

export interface Writer {
  format: Format;
  /** Writes an envelope (JSON) and returns the exact stdout bytes written. */
  envelope(envelope: Record<string, unknown>): string;
  /** Table mode rendering of a success (or dry-run) envelope. */
  table(data: Record<string, unknown>, rowsField: string | undefined, summary: string | undefined): string;
  error(error: ZoteusError, envelope: Record<string, unknown>): string;
  stderr(line: string): void;
  /** Table mode: a write's follow-up commands (the envelope's `next`), as `Next: …` lines on stderr. */
  next(commands: readonly string[]): void;
  /** Sets what runs before anything is written (run-tool.ts: erase the progress bar first). */
  beforeEachWrite(fn: () => void): void;
  /** Raw text to stdout (help, a config value asked for by name). */
  raw(text: string): string;
  /**
   * A tool's own human text (table mode), redacted, ending with a newline: fitted to the
   * width, except a document (`{ document }`: Markdown, CSV), which is printed as it is.
   */
  text(text: string | TextDocument): string;
}

/** A word of a command line as a shell reads it back. */
function shellWord(word: string): string {
  return /^[\w.:/=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command line that shows the page starting at `start`: argv with its `--start` replaced. */
export function nextPageCommand(argv: readonly string[], start: number): string {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const word = argv[i] as string;
    if (word === '--') {
      words.push(...argv.slice(i));
      break;
    }
    if (word === '--start') {
      i += 1;
      continue;
    }
    if (word.startsWith('--start=')) continue;
    words.push(word);
  }
  const end = words.indexOf('--');
  if (end === -1) words.push('--start', String(start));
  else words.splice(end, 0, '--start', String(start));
  return ['zot', ...words].map((w, i) => (i === 0 ? w : shellWord(w))).join(' ');
}

const CONTINUATION = /\s*(Cut at the size bound; continue|Continue) with start=(\d+)\./;
const PAGE_LINE = /^(?:[A-Z][\w ]*: )?(?:Showing [\d,]+–[\d,]+ of |No .* on this page )/;

/**
 * The paging footer: the page line, and when a page follows, the command that shows it
 * (`Next page: zot search climate --start 25`) instead of the tool's "continue with start=N".
 */
export function pageFooter(line: string, argv: readonly string[] | undefined): string[] {
  const m = CONTINUATION.exec(line);
  if (!m || argv === undefined) return [line];
  const cut = m[1] === 'Cut at the size bound; continue' ? ' Cut at the size bound.' : '';
  const shown = line.replace(CONTINUATION, cut);
  return [shown, `Next page: ${nextPageCommand(argv, Number(m[2]))}`];
}

/** A tool's text with its page line moved to the bottom, where every listing says it. */
function pageLast(text: string, argv: readonly string[] | undefined): string {
  const lines = text.replace(/\n+$/, '').split('\n');
  const at = lines.findIndex((l) => PAGE_LINE.test(l));
  if (at === -1) return text;
  const [line] = lines.splice(at, 1) as [string];
  return [...lines, ...pageFooter(line, argv)].join('\n');
}

export interface WriterOptions {
  /** The command's argv (without `zot`): a listing's footer says how to show the next page. */
  argv?: readonly string[];
  /** The terminal's width: tables and text are fitted to it (io.ts `terminalWidth`). */
  width?: number | undefined;
  /**
   * Colour on stderr (io.ts `useColour(io.stderr, env)`). Without it: stdout's colour, and only
   * when stderr is a TTY too.
   */
  stderrColour?: boolean | undefined;
}

const red = (text: string) => `\u001b[31m${text}\u001b[39m`;
const dim = (text: string) => `\u001b[2m${text}\u001b[22m`;

export function createWriter(
  io: CliIO,
  format: Format,
  redact: Redactor,
  colour: boolean,
  options: WriterOptions = {},
): Writer {
  const { argv, width } = options;
  const paint = options.stderrColour ?? (colour && Boolean(io.stderr.isTTY));
  let hook: (() => void) | undefined;
  const beforeWrite = () => hook?.();
  const err = (line: string) => {
    beforeWrite();
    io.stderr.write(`${line}\n`);
  };
  const fit = (text: string) =>
    width === undefined
      ? text
      : text
          .split('\n')
          .flatMap((l) => fitLine(l, width))
          .join('\n');
  const out = (text: string): string => {
    beforeWrite();
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
        text = renderRows(rows as Record<string, unknown>[], style, width);
        // The page line and the next page's command come last, below the rows.
        if (summary) text += `${fit(pageFooter(redact(summary), argv).join('\n'))}\n`;
      } else if (rowsField === undefined && summary === undefined && isDryRunPlan(clean)) {
        // A dry run: what would run where, then the plan, each field once.
        const plan = planView(clean);
        text = `${fit(plan.heading)}\n${renderObject(plan.fields, style, width)}`;
      } else {
        // A write's one-line summary says what changed; the fields follow.
        text = `${summary ? `${fit(redact(summary))}\n` : ''}${renderObject(clean, style, width)}`;
      }
      return out(text);
    },
    error(error, envelope) {
      if (format === 'json') return out(`${redactedJson(envelope, redact)}\n`);
      // A person who answered no at the prompt knows why nothing happened: no error, no hint.
      if (error.code === 'confirmation_required' && error.declined) {
        err('Cancelled.');
        return '';
      }
      // Wrapped to the terminal under their label, painted after wrapping (colour takes no room).
      const lines = (label: string, text: string) =>
        width === undefined ? [`${label} ${text}`] : wrapLine(`${label} ${text}`, width, label.length + 1);
      const [first = '', ...rest] = lines('Error:', redact(error.message));
      err(paint ? `${red('Error:')}${first.slice('Error:'.length)}` : first);
      for (const line of rest) err(line);
      if (error.hint) for (const line of lines('Hint:', redact(error.hint))) err(paint ? dim(line) : line);
      return '';
    },
    stderr(line) {
      err(redact(line));
    },
    beforeEachWrite(fn) {
      hook = fn;
    },
    next(commands) {
      if (format === 'json') return;
      for (const command of commands) {
        const line = `Next: ${redact(command)}`;
        err(paint ? dim(line) : line);
      }
    },
    raw(text) {
      return out(text);
    },
    text(text) {
      const clean = typeof text === 'string' ? fit(pageLast(redact(text), argv)) : redact(text.document);
      return out(clean.endsWith('\n') ? clean : `${clean}\n`);
    },
  };
}
