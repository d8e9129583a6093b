/**
 * Parameter descriptions are shown on both surfaces (MCP inputSchema, `zot CMD --help`, `zot
 * schema`), so they use the words both share (issue 16, point 20): no MCP tool name and no
 * camelCase spelling of an input. The seed tools keep the seeds' wording, and so does the
 * library addressing every tool shares with them (library_id, library_type).
 */
import { describe, expect, it } from 'vitest';
import { tools } from '../../src/tools/index.js';

const SEEDS = new Set(['zotero_manage_collections', 'zotero_list_collections', 'zotero_evidence_table']);
const SHARED_WITH_SEEDS = new Set(['library_id', 'library_type']);

const inputNames = new Set(tools.flatMap((t) => Object.keys(t.input.shape)));
const camelNames = new Set(
  [...inputNames]
    .filter((n) => n.includes('_'))
    .map((n) => n.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())),
);

describe('parameter descriptions read on both surfaces', () => {
  const cases = tools
    .filter((t) => !SEEDS.has(t.name))
    .flatMap((t) =>
      Object.entries(t.input.shape as Record<string, { description?: string }>)
        .filter(([name]) => !SHARED_WITH_SEEDS.has(name))
        .map(([name, schema]) => [`${t.name}.${name}`, schema.description ?? ''] as const),
    );

  it.each(cases)('%s names no MCP tool and no camelCase input', (_where, text) => {
    expect(text).not.toMatch(/\bzotero_[a-z_]+/);
    const camel = (text.match(/\b[a-z]+[A-Z]\w*/g) ?? []).filter((w) => camelNames.has(w));
    expect(camel).toEqual([]);
  });
});
