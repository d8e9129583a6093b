/**
 * zod issues in the caller's terms: one translation for both surfaces (conventions.md,
 * "Errors"). The surface says how an input is named (`--limit`, `ITEM_KEY`, `limit`) and how an
 * example is shown; the message says what was wrong and what is accepted, never zod's wording.
 */
import type { z } from 'zod';
import { didYouMean } from './did-you-mean.js';

/** Zotero object keys: 8 characters, no 0, 1 or O (the same rule as tools/shared/params.ts). */
const KEY_SOURCE = '^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$';
const KEY_FORM = 'an 8-character Zotero key (digits 2-9 and capital letters except O)';

export interface IssueNaming {
  /** How the surface names the top-level input `name`: `--limit`, `ITEM_KEY`, `limit`. */
  label(name: string): string;
  /** An example of a value for input `name`, as the surface shows it (`zot read ABCD2345`). */
  example(name: string, value: string): string;
}

export interface DescribedIssue {
  field: string | undefined;
  text: string;
}

interface Def {
  type: string;
  innerType?: Schema;
  element?: Schema;
  shape?: Record<string, Schema>;
  entries?: Record<string, string>;
  values?: unknown[];
  checks?: { _zod: { def: { check: string; format?: string; pattern?: RegExp } } }[];
}
interface Schema {
  _zod: { def: Def };
  description?: string;
  minValue?: number | null;
  maxValue?: number | null;
  isInt?: boolean;
  minLength?: number | null;
  maxLength?: number | null;
}

function unwrap(schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let i = 0; s && i < 10; i += 1) {
    const def = s._zod.def;
    if (
      ['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional'].includes(def.type)
    ) {
      s = def.innerType;
    } else if (def.type === 'pipe') {
      s = (def as unknown as { in: Schema }).in;
    } else break;
  }
  return s;
}

/** The schema at `path` below `root` (an object), unwrapped; undefined where it cannot be followed. */
function schemaAt(root: Schema, path: readonly PropertyKey[]): Schema | undefined {
  let s: Schema | undefined = unwrap(root);
  for (const part of path) {
    if (!s) return undefined;
    const def: Def = s._zod.def;
    if (typeof part === 'number' && def.type === 'array') s = unwrap(def.element);
    else if (typeof part === 'string' && def.type === 'object') s = unwrap(def.shape?.[part]);
    else return undefined;
  }
  return s;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const part of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[part];
  }
  return v;
}

function show(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

const UNBOUNDED = Number.MAX_SAFE_INTEGER;

function isKeySchema(s: Schema | undefined): boolean {
  return (s?._zod.def.checks ?? []).some((c) => c._zod.def.pattern?.source === KEY_SOURCE);
}

/**
 * An input that takes a Zotero key: its schema holds the key's pattern, or (a lookup's key,
 * which takes any text and lets the lookup answer) it is named `…_key` and its description's
 * example is a key.
 */
function isKeyInput(s: Schema | undefined, name: string): boolean {
  if (isKeySchema(s)) return true;
  if (s?._zod.def.type !== 'string' || !/_key$/.test(name)) return false;
  const example = /e\.g\.,? "([^"]+)"/.exec(s.description ?? '')?.[1];
  return example !== undefined && new RegExp(KEY_SOURCE).test(example);
}

/** `item_key` → "item", `parent_collection_key` → "parent collection". */
function keyNoun(name: string): string | undefined {
  const m = /^(.*?)_keys?$/.exec(name);
  return m?.[1] ? m[1].replace(/_/g, ' ') : undefined;
}

/** What a value of `s` must be, as a phrase after "must be" / "is required:". */
function accepted(s: Schema | undefined, name: string): string {
  if (!s) return 'a value';
  const def = s._zod.def;
  switch (def.type) {
    case 'number': {
      const whole = s.isInt === true;
      const bound =
        typeof s.minValue === 'number' && Math.abs(s.minValue) < UNBOUNDED ? s.minValue : undefined;
      // `positive()` is "greater than 0": the least whole number it takes is 1, not 0.
      const exclusive = (def.checks ?? []).some(
        (c) =>
          (c as { _zod: { def: { check?: string; inclusive?: boolean } } })._zod.def.check ===
            'greater_than' && (c as { _zod: { def: { inclusive?: boolean } } })._zod.def.inclusive === false,
      );
      const min = bound !== undefined && exclusive && whole ? bound + 1 : bound;
      const max = typeof s.maxValue === 'number' && Math.abs(s.maxValue) < UNBOUNDED ? s.maxValue : undefined;
      const kind = whole ? 'a whole number' : 'a number';
      const fmt = (n: number) => n.toLocaleString('en-US');
      if (min !== undefined && max !== undefined) return `${kind} from ${fmt(min)} to ${fmt(max)}`;
      if (min !== undefined) return `${kind}, ${fmt(min)} or more`;
      if (max !== undefined) return `${kind}, at most ${fmt(max)}`;
      return kind;
    }
    case 'boolean':
      return 'true or false';
    case 'enum':
      return `one of ${Object.values(def.entries ?? {})
        .map((v) => `'${v}'`)
        .join(', ')}`;
    case 'literal':
      return (def.values ?? []).map((v) => show(v)).join(' or ');
    case 'array': {
      const el = unwrap(def.element);
      const each = accepted(el, name);
      return `a list of values, each ${each}`;
    }
    case 'object':
      return 'an object';
    case 'string': {
      if (isKeyInput(s, name)) {
        const noun = keyNoun(name);
        return noun ? KEY_FORM.replace('Zotero key', `Zotero ${noun} key`) : KEY_FORM;
      }
      const lo = typeof s.minLength === 'number' && s.minLength > 0 ? s.minLength : undefined;
      const hi = typeof s.maxLength === 'number' ? s.maxLength : undefined;
      if (lo !== undefined && hi !== undefined)
        return `text of ${lo} to ${hi.toLocaleString('en-US')} characters`;
      if (hi !== undefined) return `text of at most ${hi.toLocaleString('en-US')} characters`;
      if (lo !== undefined) return lo === 1 ? 'non-empty text' : `text of at least ${lo} characters`;
      return 'text';
    }
    default:
      return 'a value of the documented form';
  }
}

/** The example a description gives (`e.g. "ABCD2345"`), or a key for a key input. */
function exampleOf(s: Schema | undefined, top: Schema | undefined): string | undefined {
  const text = top?.description ?? s?.description ?? '';
  const quoted = /e\.g\.,? "([^"]+)"/.exec(text)?.[1];
  if (quoted) return quoted;
  return isKeySchema(s) ? 'ABCD2345' : undefined;
}

/** The rule tools/shared/params.ts's key schemas state, in the field's name rather than the caller's. */
const KEY_RULE_WORDING = /must be a Zotero key: 8 characters from/;

/** zod's own messages start so; a message that does not was written by the declaration. */
const ZOD_WORDING = /^(Invalid|Too (small|big)|Unrecognized key|Expected|Required)\b/;

/**
 * One issue as a clause: `--limit must be a whole number from 1 to 100 (got 2.5)`. `raw` is the
 * input as given (for the value that was refused), `schema` the tool's input object.
 */
export function describeIssue(
  issue: z.core.$ZodIssue,
  schema: unknown,
  raw: Record<string, unknown>,
  naming: IssueNaming,
): DescribedIssue {
  const root = schema as Schema;
  const top = issue.path[0];
  const rest = issue.path
    .slice(1)
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('');
  if (issue.code === 'unrecognized_keys' && !ZOD_WORDING.test(issue.message) && typeof top === 'string') {
    return { field: top, text: `${naming.label(top)}${rest}: ${issue.message}` };
  }
  if (issue.code === 'unrecognized_keys') {
    const where = schemaAt(root, issue.path);
    const known = Object.keys(where?._zod.def.shape ?? {});
    const names = issue.keys.map((k) => (issue.path.length === 0 ? naming.label(k) : `'${k}'`));
    const first = issue.keys[0] ?? '';
    const near = didYouMean(first, known, (k) => (issue.path.length === 0 ? naming.label(k) : `'${k}'`));
    const subject = typeof top === 'string' ? `${naming.label(top)}${rest}` : undefined;
    const text = subject
      ? `${subject} has no field ${names.join(', ')}${near ? ` (${near})` : ''}; its fields: ${known.join(', ')}`
      : `unknown input ${names.join(', ')}${near ? ` (${near})` : ''}`;
    return { field: typeof top === 'string' ? top : first, text };
  }
  if (typeof top !== 'string') {
    return {
      field: undefined,
      text: ZOD_WORDING.test(issue.message) ? 'the input is not valid' : issue.message,
    };
  }
  const label = `${naming.label(top)}${rest}`;
  const s = schemaAt(root, issue.path);
  const topSchema = schemaAt(root, [top]);
  const value = valueAt(raw, issue.path);
  const custom = !ZOD_WORDING.test(issue.message);
  const what = accepted(s, top);
  const got = value === undefined ? '' : ` (got ${show(value)})`;
  if (
    issue.code === 'invalid_format' &&
    isKeySchema(s) &&
    (!custom || KEY_RULE_WORDING.test(issue.message))
  ) {
    // A key typed in lower case is the commonest slip: say the key it would be.
    const upper = typeof value === 'string' ? value.toUpperCase() : undefined;
    const cased =
      upper !== undefined && upper !== value && /^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/.test(upper);
    return {
      field: top,
      text: `${label} must be ${what}, e.g. ABCD2345${got}${cased ? `; keys are upper case: did you mean '${upper}'?` : ''}`,
    };
  }
  // A message the declaration wrote says more than the schema's shape can.
  if (custom) return { field: top, text: `${label}: ${issue.message}` };
  if (issue.code === 'invalid_type' && value === undefined) {
    const example = issue.path.length === 1 ? exampleOf(s, topSchema) : undefined;
    return {
      field: top,
      text: `${label} is required: ${what}${example ? `, e.g. ${naming.example(top, example)}` : ''}`,
    };
  }
  if (issue.code === 'invalid_value' && s?._zod.def.type === 'enum' && typeof value === 'string') {
    const near = didYouMean(value, Object.values(s._zod.def.entries ?? {}));
    return { field: top, text: `${label} must be ${what}${got}${near ? `; ${near}` : ''}` };
  }
  if (issue.code === 'too_small' && issue.origin === 'array') {
    const n = Number(issue.minimum);
    return { field: top, text: `${label} needs at least ${n} value${n === 1 ? '' : 's'}` };
  }
  if (issue.code === 'too_big' && issue.origin === 'array') {
    return {
      field: top,
      text: `${label} takes at most ${Number(issue.maximum).toLocaleString('en-US')} values`,
    };
  }
  return { field: top, text: `${label} must be ${what}${got}` };
}
