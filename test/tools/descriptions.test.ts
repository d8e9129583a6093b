/**
 * Descriptions that route (issue 22, point 2), checked on what `tools/list` publishes: every tool
 * says which backend answers and whether a key is needed, and each pair of siblings an agent could
 * confuse names the other, both ways. No new description sends the model to an MCP prompt.
 */
import { describe, expect, it } from 'vitest';
import { describeTool } from '../../src/surfaces/mcp/schemas.js';
import { tools } from '../../src/tools/index.js';

const published = new Map(tools.map((t) => [t.name, describeTool(t).description ?? '']));

/** Groups of tools where two could apply: each names every other one of its group. */
const SIBLINGS = [
  ['zotero_search_items', 'zotero_semantic_search'],
  ['zotero_get_item', 'zotero_list_notes', 'zotero_summarize'],
  ['zotero_create_note', 'zotero_create_items'],
  ['zotero_index', 'zotero_semantic_search'],
  ['zotero_whoami', 'zotero_groups'],
  ['zotero_format_bibliography', 'zotero_export'],
];

describe('descriptions', () => {
  it.each([...published])('%s says which backend answers and whether a key is needed', (_name, text) => {
    expect(text).toMatch(/ZOTERO_API_KEY|no (API )?key|without (an API |a )?key/i);
    expect(text).toMatch(/desktop|Web API|cloud|zotero\.sqlite|offline/i);
  });

  it.each(SIBLINGS.flatMap((group) => group.flatMap((a) => group.filter((b) => b !== a).map((b) => [a, b]))))(
    '%s names its sibling %s',
    (a, b) => {
      expect(published.get(a), a).toMatch(new RegExp(`(?<![a-z_])${b}(?![a-z_])`));
    },
  );

  it('no description sends the model to a prompt, but the seed evidence table’s own sentence', () => {
    for (const [name, text] of published) {
      if (name === 'zotero_evidence_table') continue;
      expect(text, name).not.toMatch(/\bprompt\b|zotero-[a-z-]+/i);
    }
  });

  it('no description lists internals the seeds’ reviews marked down, nor opens with the annotations', () => {
    for (const [name, text] of published) {
      expect(text, name).not.toMatch(/^Read-only; changes nothing/);
      // ASCII punctuation: a curly quote costs three bytes in every session's tool list.
      expect(text, name).not.toMatch(/[\u2018\u2019\u201c\u201d\u2026]/);
    }
  });
});
