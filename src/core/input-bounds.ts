/**
 * Bounds on what one call may carry, checked by both surfaces before a schema or a handler
 * sees the value (the CLI on file and stdin text and on its parsed input, MCP on `arguments`).
 * Validation, rendering and hashing walk values recursively, so a value nested thousands of
 * levels deep would overflow the stack there; these checks walk with an explicit stack and
 * refuse it first, naming the input. The limits are far above anything a library needs (a
 * Zotero item is about four levels deep) and far below what would exhaust a process.
 *
 * A `__proto__` key is refused wherever it appears: JSON carries it as an ordinary key, but a
 * JavaScript object cannot hold it as one (assigning it replaces the object's prototype), so
 * a schema would drop it silently and the caller would never learn that it was ignored.
 */
import { ZoteusError } from './errors.js';

/** Levels of arrays and objects one input may nest (the input itself is level 1). */
export const MAX_INPUT_DEPTH = 64;
/** Values (arrays, objects and scalars) in one input. */
export const MAX_INPUT_VALUES = 1_000_000;
/** Characters of text (strings and keys) in one input, and bytes of a file or of stdin. */
export const MAX_INPUT_TEXT = 128 * 1024 * 1024;

const MiB = 1024 * 1024;

/** How a surface names a top-level input in a message: `items` over MCP, `--json` on the CLI. */
export type InputLabel = (key: string) => string;

interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | undefined;
  segment: string | number;
}

/** `[0].creators[1]`: where below the top-level input a frame sits. */
function suffixOf(frame: Frame): string {
  const parts: string[] = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) {
    parts.push(typeof f.segment === 'number' ? `[${f.segment}]` : `.${f.segment}`);
  }
  return parts.reverse().join('');
}

function tooDeep(label: string, field: string): ZoteusError {
  return new ZoteusError(
    'validation_error',
    `${label} is nested deeper than ${MAX_INPUT_DEPTH} levels; Zoteus inputs nest only a few levels deep.`,
    { field, hint: 'Send the value in the shape the schema describes, without extra levels of nesting.' },
  );
}

function tooLarge(label: string, field: string, what: string): ZoteusError {
  return new ZoteusError('validation_error', `${label} holds more than ${what}, the most one call takes.`, {
    field,
    hint: 'Split the input into several smaller calls.',
  });
}

/**
 * Refuses, with `validation_error` naming the input, a top-level input that nests deeper than
 * MAX_INPUT_DEPTH, holds more than MAX_INPUT_VALUES values or MAX_INPUT_TEXT characters, or
 * has a `__proto__` key anywhere inside it. The top-level keys themselves are the caller's to
 * check against its schema.
 */
export function checkInputBounds(input: Readonly<Record<string, unknown>>, label: InputLabel): void {
  for (const key of Object.keys(input)) {
    const root: Frame = { value: input[key], depth: 1, parent: undefined, segment: key };
    const stack: Frame[] = [root];
    let values = 0;
    let text = 0;
    while (stack.length > 0) {
      const frame = stack.pop() as Frame;
      const { value } = frame;
      values += 1;
      if (values > MAX_INPUT_VALUES) {
        throw tooLarge(label(key), key, `${MAX_INPUT_VALUES.toLocaleString('en-US')} values`);
      }
      if (typeof value === 'string') {
        text += value.length;
        if (text > MAX_INPUT_TEXT) throw tooLarge(label(key), key, `${MAX_INPUT_TEXT / MiB} MiB of text`);
        continue;
      }
      if (value === null || typeof value !== 'object') continue;
      if (frame.depth > MAX_INPUT_DEPTH) throw tooDeep(label(key), key);
      const depth = frame.depth + 1;
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i -= 1) {
          stack.push({ value: value[i] as unknown, depth, parent: frame, segment: i });
        }
        continue;
      }
      const record = value as Record<string, unknown>;
      for (const name of Object.keys(record)) {
        if (name === '__proto__') {
          throw new ZoteusError(
            'validation_error',
            `${label(key)}${suffixOf(frame)}: unknown field '__proto__'.`,
            { field: key, hint: 'Remove the __proto__ key: no Zoteus input has a field of that name.' },
          );
        }
        text += name.length;
        stack.push({ value: record[name], depth, parent: frame, segment: name });
      }
      if (text > MAX_INPUT_TEXT) throw tooLarge(label(key), key, `${MAX_INPUT_TEXT / MiB} MiB of text`);
    }
  }
}

/** The bracket syntax of a text format whose nesting is bounded before it is parsed. */
export type NestedSyntax = 'json' | 'bibtex';

/**
 * Whether `text` nests deeper than MAX_INPUT_DEPTH, read on the text itself so that a parser
 * never builds the structure: JSON arrays and objects (brackets inside strings do not
 * count), BibTeX braces (a backslash escapes the next character in both).
 */
export function textNestsTooDeep(text: string, syntax: NestedSyntax): boolean {
  const json = syntax === 'json';
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) {
      if (inString || !json) i += 1;
      continue;
    }
    if (inString) {
      if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (json && c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || (json && c === 0x5b) /* [ */) {
      depth += 1;
      if (depth > MAX_INPUT_DEPTH) return true;
    } else if (c === 0x7d /* } */ || (json && c === 0x5d) /* ] */) depth -= 1;
  }
  return false;
}

/** The refusal of text that nests too deeply, naming the input as the surface calls it. */
export function textTooDeepError(label: string, field: string): ZoteusError {
  return tooDeep(label, field);
}

/** The refusal of a file or of stdin larger than MAX_INPUT_TEXT bytes. */
export function textTooLargeError(label: string, field: string): ZoteusError {
  return tooLarge(label, field, `${MAX_INPUT_TEXT / MiB} MiB`);
}
