/**
 * Fixture declarations that exercise the generic surfaces where the product has no tool
 * of that shape yet (a write, a partial batch, a slow write, a destructive one, a
 * listing). They record what they did in FIXTURE_DIR so tests can see what landed.
 * A factory, so in-process tests pass src/ classes and the subprocess CLI passes dist/.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function makeFixtureTools({ z, ZoteusError }) {
  const dir = (deps) => deps.env.FIXTURE_DIR ?? '/nonexistent';
  const record = (deps, file, line) => appendFileSync(join(dir(deps), file), `${line}\n`);
  const lib = {
    library_id: z.number().int().positive().optional().describe('Library id.'),
    library_type: z.enum(['user', 'group']).optional().describe('Library type.'),
  };
  const base = { since: '0.1.0', openWorld: true };

  const write = {
    ...base,
    name: 'fixture_write',
    title: 'Fixture write',
    summary: 'Append a line (fixture).',
    description: 'Writes one line to the fixture log.',
    tier: 'write',
    needsKey: true,
    cli: [{ path: ['fixture', 'write'], args: ['text'] }],
    input: z.object({ text: z.string().min(1).describe('Text to write.'), ...lib }).strict(),
    output: z.object({ written: z.string(), count: z.number() }),
    plan: (input) => ({ change: `append '${input.text}'` }),
    next: () => ['zot fixture list', 'zot whoami'],
    summarize: (out) => `Wrote ${out.written}.`,
    async run(input, deps) {
      record(deps, 'writes.log', input.text);
      const count = readFileSync(join(dir(deps), 'writes.log'), 'utf8')
        .trim()
        .split('\n').length;
      return { written: input.text, count };
    },
  };

  const batch = {
    ...base,
    name: 'fixture_batch',
    title: 'Fixture batch',
    summary: 'Add entries; entries starting with "bad" fail until FIXTURE_DIR/heal exists (fixture).',
    description: 'A batch of identifiers with per-entry failures.',
    tier: 'write',
    cli: [{ path: ['fixture', 'batch'], args: ['entries'] }],
    input: z.object({ entries: z.array(z.string()).min(1).describe('Entries.') }).strict(),
    output: z.object({
      succeeded: z.array(z.object({ entry: z.string(), key: z.string() })),
      failed: z.array(
        z.object({
          entry: z.string(),
          error: z.object({ code: z.string(), message: z.string(), retryable: z.boolean() }),
        }),
      ),
    }),
    retryFailed: {
      input: (input, previous) =>
        previous.failed.length ? { ...input, entries: previous.failed.map((f) => f.entry) } : null,
      merge: (previous, retry) => ({
        succeeded: [...previous.succeeded, ...retry.succeeded],
        failed: retry.failed,
      }),
    },
    plan: (input) => ({ entries: input.entries.length }),
    async run(input, deps) {
      const healed = existsSync(join(dir(deps), 'heal'));
      const succeeded = [];
      const failed = [];
      deps.progress({ event: 'start', phase: 'batch_add', done: 0, total: input.entries.length });
      for (const entry of input.entries) {
        record(deps, 'attempts.log', entry);
        if (entry.startsWith('bad') && !healed) {
          failed.push({
            entry,
            error: {
              code: 'network_error',
              message: `Could not reach the resolver for ${entry}.`,
              retryable: true,
            },
          });
        } else {
          succeeded.push({ entry, key: `K${String(succeeded.length).padStart(7, '2')}` });
        }
      }
      deps.progress({
        event: 'complete',
        phase: 'batch_add',
        done: input.entries.length,
        total: input.entries.length,
        succeeded: succeeded.length,
        failed: failed.length,
      });
      return { succeeded, failed };
    },
  };

  const slow = {
    ...base,
    name: 'fixture_slow',
    title: 'Fixture slow write',
    summary: 'Write after FIXTURE_SLOW_MS milliseconds (fixture).',
    description: 'A slow write, for concurrency tests.',
    tier: 'write',
    cli: [{ path: ['fixture', 'slow'], args: ['text'] }],
    input: z.object({ text: z.string().describe('Text.') }).strict(),
    output: z.object({ written: z.string(), pid: z.number() }),
    async run(input, deps) {
      await new Promise((r) => setTimeout(r, Number(deps.env.FIXTURE_SLOW_MS ?? 500)));
      record(deps, 'slow.log', `${process.pid} ${input.text}`);
      return { written: input.text, pid: process.pid };
    },
  };

  const destroy = {
    ...base,
    name: 'fixture_destroy',
    title: 'Fixture destroy',
    summary: 'Destroy an object (fixture).',
    description: 'A destructive command.',
    tier: 'destructive',
    cli: [{ path: ['fixture', 'destroy'], args: ['key'] }],
    input: z
      .object({
        key: z
          .string()
          .regex(/^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/, 'key must be a Zotero key')
          .describe('Key.'),
      })
      .strict(),
    output: z.object({ deleted: z.string() }),
    async run(input, deps) {
      record(deps, 'destroyed.log', input.key);
      return { deleted: input.key };
    },
  };

  const list = {
    ...base,
    name: 'fixture_list',
    title: 'Fixture list',
    summary: 'List rows (fixture).',
    description: 'A listing with paging.',
    tier: 'read',
    openWorld: false,
    rows: 'rows',
    cli: [{ path: ['fixture', 'list'] }],
    input: z
      .object({
        count: z.number().int().min(0).max(10000).default(3).describe('Rows in total.'),
        start: z.number().int().min(0).default(0).describe('Offset.'),
        limit: z.number().int().min(1).max(1000).default(200).describe('Page size.'),
        mode: z.enum(['plain', 'wide']).optional().describe('Row shape.'),
      })
      .strict(),
    output: z.object({
      rows: z.array(z.object({ key: z.string(), name: z.string(), numItems: z.number() })),
      totalResults: z.number(),
      start: z.number(),
    }),
    summarize: (out) => `${out.rows.length} of ${out.totalResults} rows.`,
    async run(input, deps) {
      const all = Array.from({ length: input.count }, (_, i) => ({
        key: `ROW${String(i).padStart(5, '2')}`.replace(/[01]/g, '2'),
        name: input.mode === 'wide' ? `Row number ${i} with a longer name` : `Row ${i}`,
        numItems: i * 10,
      }));
      deps.progress({ event: 'start', phase: 'list', done: 0, total: all.length });
      deps.progress({ event: 'complete', phase: 'list', done: all.length, total: all.length });
      return {
        rows: all.slice(input.start, input.start + input.limit),
        totalResults: all.length,
        start: input.start,
      };
    },
  };

  const crash = {
    ...base,
    name: 'fixture_crash',
    title: 'Fixture crash',
    summary: 'Throw a plain Error (fixture).',
    description: 'A bug.',
    tier: 'read',
    cli: [{ path: ['fixture', 'crash'] }],
    input: z.object({}).strict(),
    output: z.object({}),
    async run() {
      throw new Error('boom at the bottom of a stack');
    },
  };

  const secret = {
    ...base,
    name: 'fixture_secret',
    title: 'Fixture secret',
    summary: 'Fail with the API key in the message (fixture).',
    description: 'Leaks if redaction fails.',
    tier: 'read',
    cli: [{ path: ['fixture', 'secret'] }],
    input: z.object({}).strict(),
    output: z.object({}),
    async run(_input, deps) {
      deps.log.warn(`debug: using key ${deps.config.apiKey}`);
      throw new ZoteusError(
        'api_error',
        `Upstream refused key ${deps.config.apiKey} (Zotero-API-Key: ${deps.config.apiKey})`,
        {
          hint: `check ${deps.config.apiKey}`,
        },
      );
    },
  };

  const badOutput = {
    ...base,
    name: 'fixture_bad_output',
    title: 'Fixture bad output',
    summary: 'Return output that violates its schema (fixture).',
    description: 'A bug.',
    tier: 'read',
    cli: [{ path: ['fixture', 'bad-output'] }],
    input: z.object({}).strict(),
    output: z.object({ n: z.number() }),
    async run() {
      return { n: 'not a number' };
    },
  };

  const sum = {
    ...base,
    name: 'fixture_sum',
    title: 'Fixture sum',
    summary: 'Sum the rows of a JSON file (fixture).',
    description: 'Reads its rows from --rows FILE|-.',
    tier: 'read',
    openWorld: false,
    cli: [{ path: ['fixture', 'sum'], files: { rows: 'json' } }],
    input: z
      .object({
        rows: z
          .array(z.object({ a: z.number() }).strict())
          .min(1)
          .describe('Rows to add up.'),
      })
      .strict(),
    output: z.object({ sum: z.number() }),
    async run(input) {
      return { sum: input.rows.reduce((t, r) => t + r.a, 0) };
    },
  };

  return [write, batch, slow, destroy, list, crash, secret, badOutput, sum];
}
