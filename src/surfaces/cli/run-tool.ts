/**
 * Running one tool command, in the order of agent-interface.md ("Order of checks"):
 * input validation, read-only mode, dry-run, confirmation, idempotency replay,
 * credentials, then the work, then the envelope (success, partial or error).
 */
import type { Config } from '../../core/config.js';
import { createDeps } from '../../core/deps.js';
import { PARTIAL_EXIT_CODE, ZoteusError } from '../../core/errors.js';
import { resolveLibrary, type LibraryArgs } from '../../core/library/address.js';
import { classifyOutcome } from '../../core/outcome.js';
import {
  idempotencyStorePath,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  mergeRetry,
  requestHash,
  runIdempotent,
  type Settled,
} from '../../core/call/idempotency.js';
import type { StoredResult } from '../../core/store/idempotency.js';
import { freshWriteIds, type WriteIds } from '../../core/writes/ids.js';
import { requiresKey, type AnyTool, type Clock, type CliCommand } from '../../core/tool.js';
import { CLI_VERSION } from '../../core/version.js';
import type { Controls } from './argv.js';
import { dryRunEnvelope, errorEnvelope, meta, partialEnvelope, successEnvelope } from './envelope.js';
import { resolveFileParams } from './files.js';
import type { CliIO } from './io.js';
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
  controls: Controls;
  config: Config;
  env: Readonly<Record<string, string | undefined>>;
  io: CliIO;
  writer: Writer;
  clock: Clock;
  requestId: string;
  startedAt: number;
}

function hasLibraryParams(tool: AnyTool): boolean {
  return 'library_id' in tool.input.shape;
}

export async function runToolCommand(ctx: ToolRunContext): Promise<number> {
  const { tool, command, controls, config, writer, clock, requestId, startedAt, node } = ctx;
  const tier = node.tier ?? tool.tier;
  const mutating = tier !== 'read';
  const scope = command.path.join(' ');
  const m = (extra = {}) => meta(requestId, startedAt, clock.now(), extra);

  const input = validateInput(
    tool,
    command,
    await resolveFileParams(node.params, ctx.rawInput, ctx.io.stdin),
  );
  // The library address is part of the input: refuse a bad one before anything else.
  const library = hasLibraryParams(tool) ? resolveLibrary(input as LibraryArgs, config) : undefined;

  if (mutating && config.readOnly && !controls.dry_run) {
    throw new ZoteusError(
      'permission_denied',
      `\`zot ${scope}\` changes the library, and read-only mode is on.`,
      {
        hint: 'Unset ZOTEUS_READ_ONLY to allow writes, or use --dry-run to see the planned change.',
      },
    );
  }

  // Read commands do not take --dry-run or --idempotency-key: the parser refuses them.
  if (controls.dry_run) {
    const would: Record<string, unknown> = { command: scope };
    if (library) would.library = library;
    would.args = input;
    Object.assign(would, tool.plan ? tool.plan(input, { config, env: ctx.env }) : {});
    const envelope = dryRunEnvelope(would, m());
    if (writer.format === 'json') writer.envelope(envelope);
    else {
      writer.stderr('Dry run: nothing was changed.');
      writer.table(would, undefined, undefined);
    }
    return 0;
  }

  if (tier === 'destructive' && !controls.yes) {
    const { canAsk, confirm } = await import('./prompt.js');
    if (!canAsk(ctx.io, controls.no_interaction)) {
      throw new ZoteusError(
        'confirmation_required',
        `\`zot ${scope}\` is destructive and needs confirmation.`,
        {
          hint: 'Pass --yes to confirm, or --dry-run to see what it would do.',
        },
      );
    }
    if (!(await confirm(ctx.io, `zot ${scope}: this is destructive. Proceed?`))) {
      throw new ZoteusError('confirmation_required', 'Not confirmed: nothing was changed.', {
        hint: 'Answer y to proceed, or pass --yes.',
      });
    }
  }

  const idemKey = controls.idempotency_key;
  if (idemKey === undefined) return (await execute(ctx, input, freshWriteIds(), undefined)).value;
  if (idemKey.length === 0 || idemKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ZoteusError(
      'validation_error',
      `--idempotency-key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
      { field: 'idempotency_key' },
    );
  }
  const { openIdempotencyStore } = await import('../../core/store/idempotency.js');
  const store = await openIdempotencyStore(idempotencyStorePath(config));
  try {
    return await runIdempotent<number>({
      store,
      scope,
      key: idemKey,
      argsHash: requestHash(input, config),
      tool,
      input,
      run: (runInput, ids, previous) => execute(ctx, runInput, ids, previous),
      fail: (error) => {
        const bytes = writer.error(error, errorEnvelope(error, m()));
        return { value: error.exitCode, bytes, exitCode: error.exitCode, partial: false };
      },
      replay: (stored) => {
        writer.raw(stored.stdout);
        return stored.exitCode;
      },
    });
  } finally {
    store.close();
  }
}

/** The work and its envelope: credentials, the run, the outcome (success, partial or error). */
async function execute(
  ctx: ToolRunContext,
  runInput: Record<string, unknown>,
  writeIds: WriteIds,
  previous: StoredResult | undefined,
): Promise<Settled<number>> {
  const { tool, command, config, writer, clock, requestId, startedAt, node } = ctx;
  const tier = node.tier ?? tool.tier;
  const mutating = tier !== 'read';
  const cloudWrite = mutating && !(tool.writesFilesOnly ?? false);
  const scope = command.path.join(' ');
  const m = (extra = {}) => meta(requestId, startedAt, clock.now(), extra);
  const input = previous ? (previous.input as Record<string, unknown>) : runInput;

  if (requiresKey(tool, runInput) && config.apiKey === undefined) {
    throw new ZoteusError(
      'auth_missing',
      `\`zot ${scope}\` needs a Zotero API key, and none is configured.`,
      {
        hint: 'Set ZOTERO_API_KEY (or ZOT_API_KEY), or select a profile that has one (`zot config init`, then --profile).',
      },
    );
  }

  const tableMode = writer.format === 'table';
  const deps = createDeps({
    config,
    env: ctx.env,
    version: CLI_VERSION,
    surface: 'cli',
    clock,
    writeIds,
    writeLog: (line) => writer.stderr(line),
    progress: createProgressWriter({
      stderr: ctx.io.stderr,
      requestId,
      startedAt,
      now: () => clock.now(),
      bar: tableMode && Boolean(ctx.io.stderr.isTTY),
    }),
  });
  let output: Record<string, unknown>;
  try {
    output = (await tool.run(runInput as never, deps)) as Record<string, unknown>;
  } finally {
    await deps.services.close();
  }
  const checked = tool.output.safeParse(output);
  if (!checked.success) {
    throw new ZoteusError('internal_error', `${tool.name} produced output that does not match its schema.`, {
      hint: 'This is a bug in Zoteus; please report it.',
    });
  }
  output = mergeRetry(tool, previous, output);

  const outcome = mutating ? classifyOutcome(output) : ({ kind: 'ok' } as const);
  if (outcome.kind === 'failed') throw outcome.error;
  const data = cloudWrite ? { ...output, sync_required: true } : output;
  const next =
    mutating && tool.next
      ? await validSuggestions(ctx, tool.next(output as never, input as never))
      : undefined;

  if (ctx.controls.stream && tool.rows && !mutating) {
    return { value: streamRows(ctx, output, m), bytes: '', exitCode: 0, partial: false };
  }

  let exitCode = 0;
  let envelope: Record<string, unknown>;
  if (outcome.kind === 'partial') {
    exitCode = PARTIAL_EXIT_CODE;
    envelope = partialEnvelope(data, m({ total: outcome.total, sync_required: cloudWrite }), next);
  } else {
    envelope = successEnvelope(data, m(), next);
  }
  // The summary and the text are for table mode only (a summary can cost more than the read).
  const text = writer.format === 'table' ? tool.text?.(output as never, input as never) : undefined;
  const stdout =
    writer.format === 'json'
      ? writer.envelope(envelope)
      : text !== undefined
        ? writer.text(text)
        : writer.table(data, tool.rows, tool.summarize?.(output as never, input as never));
  if (cloudWrite) {
    writer.stderr(
      'SYNC_REMINDER: the change is in the Zotero cloud; the desktop app shows it after its next sync.',
    );
  }
  return { value: exitCode, bytes: stdout, exitCode, partial: outcome.kind === 'partial', output };
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

function streamRows(
  ctx: ToolRunContext,
  output: Record<string, unknown>,
  m: () => ReturnType<typeof meta>,
): number {
  const rows = (output[ctx.tool.rows as string] as unknown[] | undefined) ?? [];
  for (const row of rows) ctx.writer.envelope({ ok: true, data: row });
  const total = typeof output.totalResults === 'number' ? output.totalResults : rows.length;
  const start = typeof output.start === 'number' ? output.start : 0;
  ctx.writer.envelope({
    ok: true,
    summary: { count: rows.length, total, has_more: start + rows.length < total },
    meta: m(),
  });
  return 0;
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
