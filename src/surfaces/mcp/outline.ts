/**
 * The `tools/list` form of a declaration's JSON Schemas: what an agent needs to call a tool and
 * read its answer, without the validation detail it never acts on. Every session pays for the
 * list before its first call, so bytes there are paid by everyone (issue 22: 60 KB for all tools).
 * The full schemas stay in `zot schema` and are still what both surfaces validate against.
 */
type JsonSchema = Record<string, unknown>;

/** zod's bounds of an unbounded integer: they say nothing an agent can use. */
const SAFE = Number.MAX_SAFE_INTEGER;

const isObject = (value: unknown): value is JsonSchema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Drops `minimum`/`maximum` that only restate JavaScript's safe-integer range, at any depth. */
export function withoutDefaultBounds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDefaultBounds);
  if (!isObject(schema)) return schema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if ((key === 'minimum' && value === -SAFE) || (key === 'maximum' && value === SAFE)) continue;
    out[key] = key === 'enum' || key === 'const' || key === 'default' ? value : withoutDefaultBounds(value);
  }
  return out;
}

/**
 * Validation an agent does not plan a call with: the length of a string or a list, a key's
 * pattern, whether a nested object is closed. The server still checks each of them and refuses a
 * bad value in the caller's terms (the parameter, the value, what is accepted); the texts say what
 * matters (an 8-character key). Numeric bounds stay but the floor of a count (0 or 1): a limit's
 * maximum is what an agent pages by.
 */
const INPUT_DETAIL = new Set(['pattern', 'minLength', 'maxLength', 'minItems', 'maxItems', 'format']);

/**
 * A list of choices longer than this is a vocabulary the agent knows (CSL's locator labels), not a
 * choice it makes from the list: published as a string, still checked, with "did you mean".
 */
const ENUM_SHOWN_MAX = 12;

/** An input schema as published: the root stays closed; below it, no validation detail. */
export function outlineInput(schema: unknown, depth = 0): unknown {
  if (Array.isArray(schema)) return schema.map((s) => outlineInput(s, depth));
  if (!isObject(schema)) return schema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (INPUT_DETAIL.has(key)) continue;
    if (key === 'additionalProperties' && depth > 0 && value === false) continue;
    // A count or an id is at least 0 or 1: the bound an agent never needs told.
    if ((key === 'minimum' && (value === 0 || value === 1)) || (key === 'exclusiveMinimum' && value === 0))
      continue;
    // A text only the CLI shows (`onlyOn('cli', …)`) leaves nothing on MCP.
    if (key === 'description' && value === '') continue;
    if (key === 'enum' && Array.isArray(value) && value.length > ENUM_SHOWN_MAX) continue;
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'required') out[key] = value;
    else if (key === 'properties' && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, outlineInput(v, depth + 1)]));
    else out[key] = outlineInput(value, depth + 1);
  }
  return out;
}

/** The JSON type(s) a schema allows, read through `anyOf`/`oneOf` (a nullable field, a union). */
function typeOf(schema: unknown): JsonSchema {
  if (!isObject(schema)) return {};
  if (schema.type !== undefined) return { type: schema.type };
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches)) {
    const types = [
      ...new Set(branches.flatMap((b) => (isObject(b) && b.type !== undefined ? [b.type] : []))),
    ];
    if (types.length === 1) return { type: types[0] };
    if (types.length > 1) return { type: types.flat() };
  }
  if (schema.const !== undefined) return { const: schema.const };
  return {};
}

/** An object's properties, each by name only: the shape of a row, not its validation. */
function rowOf(schema: unknown): JsonSchema {
  const object = isObject(schema) && isObject(schema.properties) ? schema : undefined;
  if (!object) return typeOf(schema);
  const names = Object.keys(object.properties as JsonSchema);
  // `properties` says it is an object: no `type` beside it.
  return { properties: Object.fromEntries(names.map((name) => [name, {}])) };
}

/**
 * A top-level field by its name: for the field holding the rows, a row's field names too. The
 * answer itself shows each value's type; the names are what an agent plans its next call with.
 */
function fieldOf(schema: unknown, options: { row: boolean; described: boolean }): JsonSchema {
  if (!isObject(schema)) return {};
  const field: JsonSchema = options.row && schema.type === 'array' ? { items: rowOf(schema.items) } : {};
  if (options.described && typeof schema.description === 'string') field.description = schema.description;
  return field;
}

/**
 * An output schema as published: every top-level field by name, and for the field that holds the
 * rows (the declaration's `rows`) the field names of a row. Looser than the full schema, so
 * every answer that meets the full one meets this. `described`: the seed tools, whose
 * output-field texts the user's seeds fix.
 */
export function outlineOutput(
  schema: JsonSchema,
  options: { rows?: string | undefined; described: boolean },
): JsonSchema {
  const properties = isObject(schema.properties) ? schema.properties : {};
  return {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, field]) => [
        name,
        fieldOf(field, { row: name === options.rows, described: options.described }),
      ]),
    ),
  };
}
