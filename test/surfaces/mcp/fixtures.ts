/**
 * Small declarations that exercise every path of the MCP surface: tiers, thrown errors,
 * partial results, broken output. They exist only in tests; the surface never names a tool.
 */
import { z } from 'zod';
import { ZoteusError } from '../../../src/core/errors.js';
import { defineTool, type AnyTool } from '../../../src/core/tool.js';

/** 24 characters, like a real Zotero key; never a real one. */
export const FAKE_API_KEY = 'AbCdEfGhIjKlMnOpQrStUvWx';

const base = { since: '0.1.0', toolset: 'library', cli: [], openWorld: true } as const;
const done = z.object({ done: z.boolean() });

export const writeTool = defineTool({
  ...base,
  name: 'zotero_fixture_write',
  title: 'Fixture write',
  summary: 'A write.',
  description: 'Writes nothing; a fixture.',
  tier: 'write',
  input: z.object({ name: z.string() }).strict(),
  output: done,
  run: async () => ({ done: true }),
});

export const destructiveTool = defineTool({
  ...base,
  name: 'zotero_fixture_destroy',
  title: 'Fixture destroy',
  summary: 'A destructive call.',
  description: 'Deletes nothing; a fixture.',
  tier: 'destructive',
  idempotent: true,
  input: z.object({}).strict(),
  output: done,
  run: async () => ({ done: true }),
});

export const hintedErrorTool = defineTool({
  ...base,
  name: 'zotero_fixture_not_found',
  title: 'Fixture not found',
  summary: 'Always not_found.',
  description: 'Throws a ZoteusError with a hint.',
  tier: 'read',
  input: z.object({ key: z.string().optional() }).strict(),
  output: done,
  run: async () => {
    throw new ZoteusError('not_found', 'Collection ABCD2345 does not exist in library users/123.', {
      hint: 'List collections with zotero_list_collections.',
      field: 'key',
      retryable: false,
    });
  },
});

export const rateLimitedTool = defineTool({
  ...base,
  name: 'zotero_fixture_rate_limited',
  title: 'Fixture rate limited',
  summary: 'Always rate_limited.',
  description: 'Throws rate_limited with retry_after_seconds.',
  tier: 'read',
  input: z.object({}).strict(),
  output: done,
  run: async () => {
    throw new ZoteusError('rate_limited', 'Zotero asked us to slow down.', { retryAfterSeconds: 30 });
  },
});

export const partialTool = defineTool({
  ...base,
  name: 'zotero_fixture_partial',
  title: 'Fixture partial',
  summary: 'Some land, some fail.',
  description: 'Returns a partial result.',
  tier: 'write',
  input: z.object({}).strict(),
  output: z.object({
    succeeded: z.array(z.object({ entry: z.string(), key: z.string() })),
    failed: z.array(
      z.object({ entry: z.string(), error: z.object({ code: z.string(), message: z.string() }) }),
    ),
  }),
  summarize: (out) => `Added ${out.succeeded.length} items.`,
  run: async () => ({
    succeeded: [
      { entry: '10.1/a', key: 'ABCD2345' },
      { entry: '10.1/b', key: 'BCDE2345' },
      { entry: '10.1/c', key: 'CDEF2345' },
    ],
    failed: [
      { entry: '10.1/d', error: { code: 'network_error', message: 'reset' } },
      { entry: '10.1/e', error: { code: 'not_found', message: 'no such DOI' } },
    ],
  }),
});

export const crashingTool = defineTool({
  ...base,
  name: 'zotero_fixture_crash',
  title: 'Fixture crash',
  summary: 'Throws a plain Error.',
  description: 'A bug.',
  tier: 'read',
  input: z.object({}).strict(),
  output: done,
  run: async () => {
    throw new TypeError('Cannot read properties of undefined (reading "x")');
  },
});

export const badOutputTool = defineTool({
  ...base,
  name: 'zotero_fixture_bad_output',
  title: 'Fixture bad output',
  summary: 'Output violates its schema.',
  description: 'A bug.',
  tier: 'read',
  input: z.object({}).strict(),
  output: z.object({ count: z.number() }),
  run: async () => ({ count: 'three' }) as unknown as { count: number },
});

export const leakyTool = defineTool({
  ...base,
  name: 'zotero_fixture_leak',
  title: 'Fixture leak',
  summary: 'Throws errors that contain the API key.',
  description: 'Tries to leak the key through message, hint and plain errors.',
  tier: 'read',
  input: z.object({ plain: z.boolean().optional() }).strict(),
  output: done,
  run: async (input, deps) => {
    const key = deps.config.apiKey ?? '';
    if (input.plain)
      throw new Error(`request to https://api.zotero.org/users/1?key=${key} failed with key ${key}`);
    throw new ZoteusError('auth_invalid', `Zotero refused the key ${key}.`, { hint: `Check key ${key}.` });
  },
});

export const progressTool = defineTool({
  ...base,
  name: 'zotero_fixture_progress',
  title: 'Fixture progress',
  summary: 'Reports progress.',
  description: 'Emits progress events.',
  tier: 'read',
  input: z.object({}).strict(),
  output: done,
  run: async (_input, deps) => {
    deps.progress({ event: 'start', phase: 'adding', done: 0, total: 3 });
    for (let i = 1; i <= 3; i++) deps.progress({ event: 'progress', phase: 'adding', done: i, total: 3 });
    deps.progress({ event: 'complete', phase: 'adding', done: 3, total: 3, succeeded: 3, failed: 0 });
    return { done: true };
  },
});

export const needsKeyTool = defineTool({
  ...base,
  name: 'zotero_fixture_needs_key',
  title: 'Fixture needs key',
  summary: 'Needs an API key.',
  description: 'Needs an API key.',
  tier: 'read',
  needsKey: true,
  input: z.object({}).strict(),
  output: done,
  run: async () => ({ done: true }),
});

export const fixtureTools: AnyTool[] = [
  writeTool,
  destructiveTool,
  hintedErrorTool,
  rateLimitedTool,
  partialTool,
  crashingTool,
  badOutputTool,
  leakyTool,
  progressTool,
  needsKeyTool,
] as unknown as AnyTool[];
