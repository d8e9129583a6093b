/**
 * Running one tool command: the CLI's part of the call pipeline (core/call/run.ts), which
 * owns the order of checks. Here: parsing argv and files into the input, asking on a TTY,
 * and printing each answer as an envelope (or a table), progress and SYNC_REMINDER on stderr.
 */
import type { Config } from '../../core/config.js';
import { createDeps } from '../../core/deps.js';
import { PARTIAL_EXIT_CODE, ZoteusError } from '../../core/errors.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, openIdempotencyStoreOf } from '../../core/call/idempotency.js';
import { renderErrorRefs, renderRefs, renderValueRefs, type RefRenderer } from '../../core/call/refs.js';
import { checkedOutput, runCall } from '../../core/call/run.js';
import { MESSAGE_BOUND } from '../../core/items/read/bounds.js';
import type { AnyTool, Clock, CliCommand, Deps } from '../../core/tool.js';
import { CLI_VERSION } from '../../core/version.js';
import type { Controls } from './argv.js';
import {
  dryRunEnvelope,
  errorEnvelope,
  meta,
  partialEnvelope,
  successEnvelope,
  wroteSomething,
} from './envelope.js';
import { resolveFileParams } from './files.js';
import { canAsk, type CliIO } from './io.js';
import type { Writer } from './output.js';
import { createProgressWriter } from './progress.js';
import type { CommandNode } from './tree.js';
import { validateInput } from './validate.js';

export interface ToolRunContext {
  /** The whole command tree, which follow-up suggestions must parse against. */
  wholeTree: () => Promise<CommandNode>;
  node: CommandNode;
  tool: AnyTool;
  command: CliCommand;
  rawInput: Record<string, unknown>;
  /** Writes references to other tools (in messages and hints) as commands. */
  refs: RefRenderer;
  controls: Controls;
  config: Config;
  env: Readonly<Record<string, string | undefined>>;
  io: CliIO;
  writer: Writer;
  clock: Clock;
  requestId: string;
  startedAt: number;
}

export async function runToolCommand(ctx: ToolRunContext): Promise<number> {
  const { tool, command, controls, config, writer, clock, requestId, startedAt, node } = ctx;
  const scope = command.path.join(' ');
  const m = (extra = {}) => meta(requestId, startedAt, clock.now(), extra);

  const input = validateInput(tool, command, await resolveFileParams(node.params, ctx.rawInput, ctx.io));
  const tier = tool.callTier?.(input as never) ?? node.tier ?? tool.tier;
  const mutating = tier !== 'read';
  const cloudWrite = mutating && !(tool.writesFilesOnly ?? false);
  const idemKey = controls.idempotency_key;
  if (idemKey !== undefined && (idemKey.length === 0 || idemKey.length > MAX_IDEMPOTENCY_KEY_LENGTH)) {
    throw new ZoteusError(
      'validation_error',
      `--idempotency-key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
      { field: 'idempotency_key' },
    );
  }

  const tableMode = writer.format === 'table';
  // Decided by stderr, where progress goes: a bar for a person at a terminal, else NDJSON.
  const progress = createProgressWriter({
    stderr: ctx.io.stderr,
    requestId,
    startedAt,
    now: () => clock.now(),
    bar: Boolean(ctx.io.stderr.isTTY),
  });
  // Whatever is written next (an answer, a warning, an error) first erases a bar on the screen.
  writer.beforeEachWrite(() => progress.clear());
  const deps = createDeps({
    config,
    env: ctx.env,
    version: CLI_VERSION,
    surface: 'cli',
    clock,
    writeLog: (line) => writer.stderr(line),
    // A background build's announcement may name a command: in the CLI's words.
    progress: (event) =>
      progress.emit(event.message ? { ...event, message: renderRefs(event.message, ctx.refs) } : event),
  });
  // Where this call's writes land (set by the routing of writes): `data.written_to`.
  const written: { to?: 'desktop' | 'cloud' } = {};
  deps.written = written;
  // Asked only on a TTY, never with --no-interaction (prompt.ts loads readline when it asks).
  const canPrompt = tier === 'destructive' && !controls.yes && canAsk(ctx.io, controls.no_interaction);
  try {
    return await runCall<number>({
      tool,
      tier,
      label: `\`zot ${scope}\``,
      config,
      input,
      dryRun: controls.dry_run,
      confirmed: controls.yes,
      requestId,
      ask: canPrompt
        ? async (question) => (await import('./prompt.js')).confirm(ctx.io, question)
        : undefined,
      deps,
      idempotency:
        idemKey === undefined
          ? undefined
          : {
              open: () => openIdempotencyStoreOf(config),
              scope,
              key: idemKey,
            },
      answer: {
        dryRun: (would) => {
          const plan = { command: scope, ...would };
          const envelope = dryRunEnvelope(plan, m());
          if (writer.format === 'json') writer.envelope(envelope);
          else {
            writer.stderr('Dry run: nothing was changed.');
            writer.table(plan, undefined, undefined);
          }
          return 0;
        },
        success: async (answered, outcome, original) => {
          // References to other tools in the output (a suggested fix) become commands.
          const output = renderValueRefs(answered, ctx.refs);
          const writtenTo = written.to ?? 'cloud';
          const data = cloudWrite ? { ...output, sync_required: true, written_to: writtenTo } : output;
          if (controls.stream && tool.rows && !mutating) {
            const streamed = await streamRows(ctx, deps, original, output, m);
            return { value: streamed, bytes: '', exitCode: 0, partial: false };
          }
          if (controls.all && tool.rows && !mutating) {
            const whole = await allRows(ctx, deps, original, output);
            const envelope = successEnvelope(whole, m());
            const stdout = !tableMode
              ? writer.envelope(envelope)
              : writer.table(whole, tool.rows, tool.summarize?.(whole as never, original as never));
            return { value: 0, bytes: stdout, exitCode: 0, partial: false, output: whole };
          }
          const next = tool.next
            ? await validSuggestions(ctx, tool.next(output as never, original as never))
            : undefined;
          let exitCode = 0;
          let envelope: Record<string, unknown>;
          if (outcome.kind === 'partial') {
            exitCode = PARTIAL_EXIT_CODE;
            envelope = partialEnvelope(data, m({ total: outcome.total, sync_required: cloudWrite }), next);
          } else envelope = successEnvelope(data, m(), next);
          // The summary and the text are for table mode only (a summary can cost more than the read).
          const text = tableMode ? tool.text?.(output as never, original as never) : undefined;
          const stdout = !tableMode
            ? writer.envelope(envelope)
            : text !== undefined
              ? writer.text(text)
              : writer.table(data, tool.rows, tool.summarize?.(output as never, original as never));
          // Only when something landed: a zero-change call has nothing for the desktop to sync.
          if (cloudWrite && wroteSomething(output)) {
            writer.stderr(
              writtenTo === 'desktop'
                ? 'SYNC_REMINDER: the change is in the Zotero desktop app; the Zotero cloud (and your other devices) see it after the app syncs.'
                : 'SYNC_REMINDER: the change is in the Zotero cloud; the desktop app shows it after its next sync.',
            );
          }
          if (tableMode) reportFailed(writer, output);
          if (tableMode && next) writer.next(next);
          return { value: exitCode, bytes: stdout, exitCode, partial: outcome.kind === 'partial', output };
        },
        failure: (thrown) => {
          const error = renderErrorRefs(thrown, ctx.refs);
          const bytes = writer.error(error, errorEnvelope(error, m()));
          return { value: error.exitCode, bytes, exitCode: error.exitCode, partial: false };
        },
        replay: (stored) => {
          writer.raw(stored.stdout);
          return stored.exitCode;
        },
      },
    });
  } finally {
    progress.clear();
    await deps.services.close();
  }
}

/** Entries a table view lists on stderr at most; the JSON envelope has them all. */
const FAILED_SHOWN = 10;

/**
 * A partial answer at a terminal says what failed: the table or text shows what landed, and
 * each failed entry (its key and why) goes to stderr, as in the envelope's `failed`.
 */
function reportFailed(writer: Writer, output: Record<string, unknown>): void {
  const failed = Array.isArray(output.failed) ? (output.failed as Array<Record<string, unknown>>) : [];
  if (failed.length === 0) return;
  writer.stderr(`${failed.length} failed:`);
  for (const entry of failed.slice(0, FAILED_SHOWN)) {
    const what =
      typeof entry.key === 'string'
        ? entry.key
        : typeof entry.entry === 'string'
          ? entry.entry
          : `#${String(entry.index)}`;
    const why =
      typeof entry.message === 'string'
        ? entry.message
        : typeof (entry.error as { message?: unknown } | undefined)?.message === 'string'
          ? (entry.error as { message: string }).message
          : 'failed';
    writer.stderr(`  ${what}: ${why}`);
  }
  if (failed.length > FAILED_SHOWN)
    writer.stderr(`  … and ${failed.length - FAILED_SHOWN} more (--json lists them all).`);
}

async function validSuggestions(ctx: ToolRunContext, suggestions: string[]): Promise<string[]> {
  if (suggestions.length === 0) return [];
  const [{ checkSuggestion }, root] = await Promise.all([import('./suggestions.js'), ctx.wholeTree()]);
  return suggestions.filter((s) => {
    const ok = checkSuggestion(root, s);
    if (!ok) ctx.writer.stderr(`zot: dropped a follow-up suggestion that does not parse: ${s}`);
    return ok;
  });
}

/** Rows asked of each further page when no `--limit` caps the stream: a page is cut at the size bound anyway. */
const STREAM_PAGE = 100;

/**
 * The pages of a listing after its first answer, as `--stream` and `--all` read them: the checks
 * of the call pipeline ran once (this is its success answer); further pages run the tool again
 * with the same deps, from `nextStart` (or `start` plus the rows received when the tool has no
 * `nextStart`). An explicit `--limit` caps the rows. The tool's own progress events of each page
 * are replaced by one count over the whole listing.
 */
async function* pagesOf(
  ctx: ToolRunContext,
  deps: Deps,
  input: Record<string, unknown>,
  first: Record<string, unknown>,
): AsyncGenerator<{ rows: unknown[]; total: number | undefined; more: boolean }> {
  const { tool } = ctx;
  const rowsField = tool.rows as string;
  const shape = tool.input.shape as Record<string, unknown>;
  const outShape = (tool.output as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  const pages = 'start' in shape && 'limit' in shape;
  const hasNextStart = 'nextStart' in outShape;
  const cap = ctx.rawInput.limit !== undefined && typeof input.limit === 'number' ? input.limit : undefined;
  const pageSize = Math.min(STREAM_PAGE, maxOf(shape.limit) ?? STREAM_PAGE);
  const quiet = { ...deps, progress: () => {} };
  const phase = `${ctx.command.path.join('_')}_pages`;
  let output = first;
  let count = 0;
  let total: number | undefined;
  for (let n = 0; ; n += 1) {
    const rows = (output[rowsField] as unknown[] | undefined) ?? [];
    const room = cap === undefined ? rows.length : Math.min(rows.length, cap - count);
    count += room;
    if (typeof output.totalResults === 'number') total = output.totalResults;
    const start =
      typeof output.start === 'number' ? output.start : ((input.start as number | undefined) ?? 0);
    const next = hasNextStart
      ? (output.nextStart as number | undefined)
      : total !== undefined && start + rows.length < total
        ? start + rows.length
        : undefined;
    const more = next !== undefined || room < rows.length;
    const last = !pages || next === undefined || rows.length === 0 || (cap !== undefined && count >= cap);
    yield { rows: rows.slice(0, room), total, more };
    const goal = cap ?? total;
    if (n === 0 && !last)
      deps.progress({ event: 'start', phase, done: count, ...(goal !== undefined ? { total: goal } : {}) });
    else if (!last)
      deps.progress({
        event: 'progress',
        phase,
        done: count,
        ...(goal !== undefined ? { total: goal } : {}),
      });
    if (last) {
      if (n > 0) deps.progress({ event: 'complete', phase, done: count, total: count });
      return;
    }
    const limit = cap === undefined ? pageSize : Math.min(pageSize, cap - count);
    const page = checkedOutput(tool, await tool.run({ ...input, start: next, limit } as never, quiet));
    output = renderValueRefs(page, ctx.refs);
  }
}

/**
 * `--stream`: every row the command would page through, each printed as an NDJSON line as its
 * page arrives, then a summary line. Without `--limit` the stream has no cap; one page is held.
 */
async function streamRows(
  ctx: ToolRunContext,
  deps: Deps,
  input: Record<string, unknown>,
  first: Record<string, unknown>,
  m: () => ReturnType<typeof meta>,
): Promise<number> {
  let count = 0;
  let total: number | undefined;
  let more = false;
  for await (const page of pagesOf(ctx, deps, input, first)) {
    for (const row of page.rows) ctx.writer.envelope({ ok: true, data: row });
    count += page.rows.length;
    total = page.total ?? total;
    more = page.more;
  }
  ctx.writer.envelope({
    ok: true,
    summary: { count, total: total ?? count, has_more: more },
    meta: m(),
  });
  return 0;
}

/**
 * `--all`: every row in one answer, when it fits the size bound (conventions.md: no answer over
 * about 100 KB); a listing that does not fit is refused as soon as it is known, pointing to
 * `--stream`, which prints any number of rows.
 */
async function allRows(
  ctx: ToolRunContext,
  deps: Deps,
  input: Record<string, unknown>,
  first: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const rowsField = ctx.tool.rows as string;
  const rows: unknown[] = [];
  let bytes = 0;
  let total: number | undefined;
  let more = false;
  for await (const page of pagesOf(ctx, deps, input, first)) {
    for (const row of page.rows) bytes += JSON.stringify(row).length + 1;
    rows.push(...page.rows);
    total = page.total ?? total;
    more = page.more;
    if (bytes > MESSAGE_BOUND) {
      const where = ['zot', ...ctx.command.path].join(' ');
      throw new ZoteusError(
        'validation_error',
        `--all: the ${rows.length}${total !== undefined ? ` of ${total}` : ''} rows read so far are more than one answer holds (about 100 KB).`,
        {
          field: 'all',
          hint: `Use \`${where} --stream\` for every row (one JSON line each), or page with --start and --limit.`,
        },
      );
    }
  }
  const { nextStart: _next, truncated: _cut, ...rest } = first;
  return {
    ...rest,
    [rowsField]: rows,
    ...(total !== undefined ? { totalResults: total } : {}),
    ...(more ? { nextStart: (typeof input.start === 'number' ? input.start : 0) + rows.length } : {}),
  };
}

/** The maximum of a number schema (under optional and default), if it states one. */
function maxOf(schema: unknown): number | undefined {
  let s = schema as { unwrap?: () => unknown; maxValue?: number | null } | undefined;
  while (s && typeof s.unwrap === 'function' && s.maxValue === undefined) s = s.unwrap() as typeof s;
  const max = s?.maxValue;
  return typeof max === 'number' && Number.isFinite(max) ? max : undefined;
}

export function errorExit(
  writer: Writer,
  error: ZoteusError,
  requestId: string,
  startedAt: number,
  now: number,
): number {
  writer.error(error, errorEnvelope(error, meta(requestId, startedAt, now)));
  return error.exitCode;
}
