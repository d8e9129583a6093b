/**
 * The prompts zotero-literature-review and zotero-organize: listed with their arguments, rendered
 * with them, validated in the user's terms, and naming only tools the server exposes, for every
 * combination of the tools each may use, in read-only mode and in the lean default toolset.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { prompts } from '../../../src/prompts/index.js';
import { getPrompt } from '../../../src/surfaces/mcp/prompts.js';
import { exposedTools } from '../../../src/surfaces/mcp/schemas.js';
import { tools } from '../../../src/tools/index.js';
import { connect } from './harness.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function open(env: Record<string, string> = {}): Promise<Client> {
  const c = await connect(tools, env);
  closers.push(c.close);
  return c.client;
}

const namesIn = (text: string) => [...new Set(text.match(/zotero_[a-z_]+/g) ?? [])];
const textOf = (result: { messages: { content: { type: string; text?: string } }[] }) =>
  result.messages[0]!.content.text as string;

const REVIEW = 'zotero-literature-review';
const ORGANIZE = 'zotero-organize';
const REVIEW_TOOLS = [
  'zotero_search_items',
  'zotero_semantic_search',
  'zotero_summarize',
  'zotero_get_fulltext',
  'zotero_get_item',
  'zotero_evidence_table',
  'zotero_format_bibliography',
];
const ORGANIZE_TOOLS = [
  'zotero_list_collections',
  'zotero_tag_audit',
  'zotero_list_tags',
  'zotero_find_duplicates',
  'zotero_search_items',
  'zotero_merge_items',
  'zotero_manage_tags',
  'zotero_manage_collections',
  'zotero_undo',
];

describe('prompts/list', () => {
  it('lists every prompt with its arguments', async () => {
    const client = await open();
    const { prompts: listed } = await client.listPrompts();
    expect(listed.map((p) => p.name)).toEqual(['zotero-evidence-table', 'zotero-cite', REVIEW, ORGANIZE]);
    const args = (name: string) =>
      listed.find((p) => p.name === name)!.arguments?.map((a) => [a.name, a.required]);
    expect(args(REVIEW)).toEqual([
      ['topic', true],
      ['collection_key', false],
      ['max_works', false],
      ['style', false],
    ]);
    expect(args(ORGANIZE)).toEqual([
      ['goal', false],
      ['collection_key', false],
    ]);
    for (const prompt of listed) for (const a of prompt.arguments ?? []) expect(a.description).toBeTruthy();
  });
});

describe('zotero-literature-review', () => {
  it('with every tool: search, read, tabulate, write, then the bibliography, in that order', async () => {
    const client = await open();
    const exposed = (await client.listTools()).tools.map((t) => t.name);
    const result = await client.getPrompt({
      name: REVIEW,
      arguments: {
        topic: ' sleep and memory consolidation ',
        collection_key: 'abcd2345',
        max_works: '5',
        style: 'apa',
      },
    });
    expect(result.description).toBe('Literature review of at most 5 works of collection ABCD2345.');
    const text = textOf(result);
    for (const name of namesIn(text)) expect(exposed).toContain(name);
    expect(text).toContain('on this topic:\n\nsleep and memory consolidation\n');
    const order = [
      'call zotero_semantic_search with the topic as q and collection_key ABCD2345',
      'zotero_search_items with its key terms and collection_key ABCD2345',
      'Keep at most 5 works',
      '2. Read: call zotero_summarize',
      'zotero_get_fulltext',
      '3. Tabulate: call zotero_evidence_table with question "sleep and memory consolidation"',
      '4. Write:',
      '5. Bibliography: call zotero_format_bibliography with the keys of the works you cited and style "apa"',
    ].map((part) => text.indexOf(part));
    for (const at of order) expect(at).toBeGreaterThan(0);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('refuses a missing topic and a count out of range, in the user’s terms', async () => {
    const client = await open();
    const refused = async (args: Record<string, string>) => {
      const error = await client.getPrompt({ name: REVIEW, arguments: args }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
      return (error as McpError).message;
    };
    expect(await refused({})).toContain('topic is required');
    expect(await refused({ topic: 'x', max_works: '31' })).toContain(
      'must be a whole number from 1 to 30; got "31"',
    );
    expect(await refused({ topic: 'x', collection_key: 'nope' })).toContain(
      '"nope" is not a Zotero collection key',
    );
  });

  it('for every combination of the tools it may use: names only those that exist, says what to do without them', () => {
    combinations(REVIEW_TOOLS, (list, names) => {
      const text = textOf(getPrompt(prompts, list, REVIEW, { topic: 'T' }));
      for (const name of namesIn(text)) expect(names).toContain(name);
      if (!names.includes('zotero_search_items') && !names.includes('zotero_semantic_search'))
        expect(text).toContain('this server has no search tool');
      if (!names.includes('zotero_evidence_table')) expect(text).toContain('cannot render an evidence table');
      if (!names.includes('zotero_format_bibliography')) expect(text).toContain('cannot format references');
    });
  });
});

describe('zotero-organize', () => {
  it('with every tool: look, a plan that changes nothing until approved, then the writes', async () => {
    const client = await open();
    const exposed = (await client.listTools()).tools.map((t) => t.name);
    const result = await client.getPrompt({
      name: ORGANIZE,
      arguments: { goal: 'merge near-duplicate tags' },
    });
    expect(result.description).toBe('Organise the library: plan first, then apply what the user approves.');
    const text = textOf(result);
    for (const name of namesIn(text)) expect(exposed).toContain(name);
    expect(text).toContain('Goal: merge near-duplicate tags.');
    const look = text.indexOf('1. Look: call zotero_list_collections');
    const plan = text.indexOf('2. Plan (the dry run)');
    const noWrite = text.indexOf('Change nothing yet.');
    const apply = text.indexOf('3. Apply only what the user approved');
    expect(look).toBeGreaterThan(0);
    expect(plan).toBeGreaterThan(look);
    expect(noWrite).toBeGreaterThan(plan);
    expect(apply).toBeGreaterThan(noWrite);
    expect(text).toContain('zotero_merge_items without apply previews the merge and changes nothing');
    expect(text).toContain('zotero_undo takes one back');
  });

  it('in read-only mode it names no write tool and says the plan is for the user to carry out', async () => {
    const client = await open({ ZOTEUS_READ_ONLY: 'true' });
    const exposed = (await client.listTools()).tools.map((t) => t.name);
    const text = textOf(await client.getPrompt({ name: ORGANIZE, arguments: {} }));
    for (const name of namesIn(text)) expect(exposed).toContain(name);
    expect(text).not.toMatch(/zotero_manage_|zotero_undo/);
    expect(text).toContain('this server takes no writes');
  });

  it('for every combination of the tools it may use: names only those that exist', () => {
    combinations(ORGANIZE_TOOLS, (list, names) => {
      const text = textOf(getPrompt(prompts, list, ORGANIZE, { collection_key: 'ABCD2345' }));
      for (const name of namesIn(text)) expect(names).toContain(name);
    });
  });
});

describe('in the lean default toolset', () => {
  it('every prompt names only tools the default set lists', async () => {
    const client = await open({ ZOTEUS_TOOLSETS: 'default' });
    const exposed = (await client.listTools()).tools.map((t) => t.name);
    const args: Record<string, Record<string, string>> = {
      'zotero-evidence-table': { question: 'Q' },
      'zotero-cite': { query: 'Q', export_format: 'bibtex' },
      [REVIEW]: { topic: 'T' },
      [ORGANIZE]: {},
    };
    for (const prompt of prompts) {
      const text = textOf(await client.getPrompt({ name: prompt.name, arguments: args[prompt.name]! }));
      for (const name of namesIn(text)) expect(exposed, `${prompt.name} names ${name}`).toContain(name);
    }
  });
});

/** Runs `check` on the tool list with each subset of `optional` (the rest of the real list always there). */
function combinations(
  optional: string[],
  check: (list: ReturnType<typeof exposedTools>, names: string[]) => void,
) {
  const base = tools.filter((t) => !optional.includes(t.name));
  const real = optional.map((name) => tools.find((t) => t.name === name)!);
  for (let mask = 0; mask < 1 << real.length; mask += 1) {
    const chosen = real.filter((_, i) => mask & (1 << i));
    for (const readOnly of [false, true]) {
      const list = exposedTools([...base, ...chosen], { readOnly });
      check(
        list,
        list.map((t) => t.name),
      );
    }
  }
}
