/**
 * What `tools/list` publishes for a declaration: JSON Schemas derived from its zod input
 * and output, and annotations derived from its tier (agent-interface.md, "MCP surface").
 */
import type { Tool } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { renderRefs } from '../../core/call/refs.js';
import { mcpRefRenderer } from './refs.js';
import type { Config } from '../../core/config.js';
import { changesLibrary, type AnyTool } from '../../core/tool.js';
import { selectTools } from '../../core/toolsets.js';
import { outlineOutput, withoutDefaultBounds } from './outline.js';

type JsonSchema = Record<string, unknown>;

/** Keywords whose value maps names to schemas: the names are data, the values are schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is data, not a schema: never rewritten. */
const DATA_KEYWORDS = new Set(['default', 'const', 'enum', 'examples', 'required']);

/**
 * Removes every `$schema` dialect stamp: some clients reject schemas that carry one.
 * Only schema positions are touched, so a property that happens to be named `$schema` survives.
 */
export function stripDialect(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripDialect);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema as JsonSchema)) {
    if (key === '$schema') continue;
    if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([k, v]) => [k, stripDialect(v)]),
      );
    } else out[key] = stripDialect(value);
  }
  return out;
}

/**
 * JSON Schema of a zod object as MCP wants it: `type: object` at the root, no dialect stamp.
 * Unrepresentable parts (a transform, say) become `{}` rather than breaking the whole list:
 * the surface still validates with zod, and the committed schema snapshots show the gap.
 */
export function jsonSchemaOf(schema: z.ZodObject, io: 'input' | 'output'): Tool['inputSchema'] {
  const json = stripDialect(z.toJSONSchema(schema, { io, unrepresentable: 'any' })) as JsonSchema;
  return { ...json, type: 'object' } as Tool['inputSchema'];
}

/** Every mutating tool takes `idempotency_key` (call.ts takes it out before the tool's own validation). */
function withIdempotencyKey(tool: AnyTool, schema: Tool['inputSchema']): Tool['inputSchema'] {
  if (tool.tier === 'read') return schema;
  return {
    ...schema,
    properties: {
      ...schema.properties,
      idempotency_key: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description:
          'Your key for this request: a retry with the same key and arguments replays or resumes it instead of writing twice (24 h).',
      },
    },
  };
}

/**
 * Descriptions in MCP's words: a declaration's prose may hold references (`onlyOn('mcp', …)`,
 * `toolRef`), which the CLI renders in its own (cli-words.ts).
 */
function mcpWords<T>(value: T): T {
  if (typeof value === 'string')
    return (value.includes('{{') ? renderRefs(value, mcpRefRenderer) : value) as T;
  if (Array.isArray(value)) return value.map(mcpWords) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === 'description' || typeof v === 'object' ? mcpWords(v) : v,
      ]),
    ) as T;
  return value;
}

/**
 * The `tools/list` entry of one declaration, in the outline of outline.ts: the title once (the
 * top-level `title`, which clients prefer to the annotation's), input schemas without zod's
 * safe-integer bounds, output schemas as the shape of the answer.
 */
export function describeTool(tool: AnyTool): Tool {
  const input = withoutDefaultBounds(mcpWords(jsonSchemaOf(tool.input, 'input'))) as Tool['inputSchema'];
  return {
    name: tool.name,
    title: tool.title,
    description: mcpWords(tool.description),
    // Closed: an unknown argument is refused, so the schema says so too.
    inputSchema: withIdempotencyKey(tool, { ...input, additionalProperties: false }),
    outputSchema: outlineOutput(mcpWords(jsonSchemaOf(tool.output, 'output')), {
      rows: tool.rows,
      described: tool.seed === true,
    }) as Tool['outputSchema'],
    annotations: {
      readOnlyHint: tool.tier === 'read',
      destructiveHint: tool.tier === 'destructive',
      idempotentHint: tool.idempotent ?? tool.tier === 'read',
      openWorldHint: tool.openWorld,
    },
  };
}

/**
 * The declarations a server exposes: those of the chosen toolsets (toolsets.ts; every tool when
 * the config names none, as configs built by hand do), then only read tools in read-only mode and
 * only enabled ones.
 */
export function exposedTools(
  tools: readonly AnyTool[],
  config: Pick<Config, 'readOnly'> & Partial<Config>,
): AnyTool[] {
  return selectTools(tools, config.toolsets ?? 'all').filter(
    (tool) =>
      (!config.readOnly || !changesLibrary(tool, tool.tier)) && (tool.enabled?.(config as Config) ?? true),
  );
}
