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
import { outlineInput, outlineOutput, withoutDefaultBounds } from './outline.js';

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
        description: 'Same key and arguments: replayed, never written twice (24 h).',
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
 * safe-integer bounds or string and list lengths, output schemas as the shape of the answer.
 */
export function describeTool(tool: AnyTool): Tool {
  const input = withIdempotencyKey(tool, {
    ...(withoutDefaultBounds(mcpWords(jsonSchemaOf(tool.input, 'input'))) as Tool['inputSchema']),
    // Closed: an unknown argument is refused, so the schema says so too.
    additionalProperties: false,
  });
  return {
    name: tool.name,
    title: tool.title,
    description: mcpWords(tool.description),
    // The seed tools' inputs stay as the seeds specify them (closed rows, key patterns).
    inputSchema: (tool.seed === true ? input : outlineInput(input)) as Tool['inputSchema'],
    outputSchema: outlineOutput(mcpWords(jsonSchemaOf(tool.output, 'output')), {
      rows: tool.rows,
      described: tool.seed === true,
    }) as Tool['outputSchema'],
    annotations: annotationsOf(tool),
  };
}

/**
 * The safety profile in MCP's hints, leaving out what a hint's default already says (the
 * specification's defaults: not idempotent, open world; destructive and idempotent mean nothing
 * for a read-only tool): the same facts in fewer bytes of every session's tool list.
 */
function annotationsOf(tool: AnyTool): NonNullable<Tool['annotations']> {
  const read = tool.tier === 'read';
  const idempotent = tool.idempotent ?? read;
  return {
    readOnlyHint: read,
    ...(read ? {} : { destructiveHint: tool.tier === 'destructive' }),
    ...(!read && idempotent ? { idempotentHint: true } : {}),
    ...(tool.openWorld ? {} : { openWorldHint: false }),
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
