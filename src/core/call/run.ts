/**
 * The one call pipeline both surfaces run (agent-interface.md, "Order of checks"):
 *
 *   input validation (what the surface parsed, then what the call itself requires)
 *   → gates decided offline (read-only mode, a tool this installation turned off, the
 *     bulk-write threshold) → dry-run → credentials → the key check → confirmation
 *   → idempotency → the work → the outcome (success, partial, error).
 *
 * Nobody is asked to confirm what will then be refused for a reason known before the work
 * starts, and a call refused at any step has sent no request but the (cached) key check.
 * The surfaces supply only their I/O: how to ask a person, and how each answer is printed.
 */
import { readOnlyRefusal, type Config } from '../config.js';
import { ZoteusError } from '../errors.js';
import { resolveLibrary, type LibraryArgs } from '../library/address.js';
import { authMissing, checkKey } from '../library/keys.js';
import { classifyOutcome, type Outcome } from '../outcome.js';
import type { IdempotencyStore, StoredResult } from '../store/idempotency.js';
import { changesLibrary, isMutating, requiresKey, type AnyTool, type Deps, type Tier } from '../tool.js';
import { freshWriteIds, type WriteIds } from '../writes/ids.js';
import { createRecorder, journaledArgs, openJournalOf } from '../journal/recorder.js';
import { boundOutput } from './bound.js';
import { bulkRefusal } from './bulk.js';
import { onlyOn, paramRef } from './refs.js';
import { refuseServerPaths } from './server-paths.js';
import { mergeRetry, requestHash, runIdempotent, type Settled } from './idempotency.js';

/** How a surface answers each way a call can end. */
export interface CallAnswers<R> {
  /** `--dry-run`: the planned change, computed offline. */
  dryRun(would: Record<string, unknown>): R;
  /** The tool's output (merged after a partial retry), classified. */
  success(
    output: Record<string, unknown>,
    outcome: Outcome,
    input: Record<string, unknown>,
  ): Settled<R> | Promise<Settled<R>>;
  /** A final error of an idempotent call, stored and answered like a result. */
  failure(error: ZoteusError): Settled<R>;
  /** A stored outcome, answered again byte for byte. */
  replay(stored: StoredResult): R;
}

export interface CallRequest<R> {
  tool: AnyTool;
  /** The tier of what runs: a CLI command's own, or the tool's. */
  tier: Tier;
  /** How messages name the call to its caller: "`zot collection delete`", "zotero_manage_collections". */
  label: string;
  config: Config;
  /** The input as the surface validated it against the tool's schema. */
  input: Record<string, unknown>;
  /** Plan only (CLI `--dry-run`). */
  dryRun?: boolean | undefined;
  /** A destructive call is confirmed already (CLI `--yes`; MCP clients confirm by annotation). */
  confirmed: boolean;
  /** Asks a person; undefined where no one can be asked (no TTY, `--no-interaction`). */
  ask?: ((question: string) => Promise<boolean>) | undefined;
  /** The deps of this call (its `writeIds` are replaced by the request's own). */
  deps: Deps;
  /**
   * The id the surface answers this call under (`meta.request_id`, `zoteus/request_id`): the
   * write journal records the call's writes under it. Without one, a fresh id.
   */
  requestId?: string | undefined;
  /** With an idempotency key: where its record lives and the key's scope. */
  idempotency?: { open(): Promise<IdempotencyStore>; scope: string; key: string } | undefined;
  answer: CallAnswers<R>;
}

export async function runCall<R>(request: CallRequest<R>): Promise<R> {
  const { tool, config, input } = request;
  const mutating = isMutating(request.tier);

  // 1. What the call itself requires, beyond its schema (an action's own fields, something to change).
  const library = 'library_id' in tool.input.shape ? resolveLibrary(input as LibraryArgs, config) : undefined;
  refuseServerPaths(tool, input, request.deps);
  tool.check?.(input as never, { config });

  // 2. Gates that need no network.
  if (
    changesLibrary(tool, request.tier) &&
    (config.readOnly || config.readOnlyGrant) &&
    request.dryRun !== true
  ) {
    throw readOnlyRefusal(config, request.label);
  }
  if (tool.enabled && !tool.enabled(config)) {
    const off = tool.disabled ?? { message: `${request.label} is turned off on this installation.` };
    throw new ZoteusError('permission_denied', off.message, off.hint ? { hint: off.hint } : {});
  }
  // A dry run only previews: read-only mode and the bulk threshold protect the library, and a
  // plan says when a confirmation will be needed instead of refusing for it.
  const bulk = request.dryRun === true ? undefined : tool.bulk?.(input as never);
  const refused = bulk
    ? bulkRefusal(config, bulk, input.confirm === true, `Call again with ${paramRef('confirm', 'true')}`)
    : undefined;
  if (refused) throw refused;

  // 3. The plan, offline.
  if (request.dryRun === true) {
    const would: Record<string, unknown> = {};
    if (library) would.library = library;
    would.args = input;
    Object.assign(would, tool.plan ? tool.plan(input as never, { config, env: request.deps.env }) : {});
    if (tool.planDetail) Object.assign(would, await tool.planDetail(input as never, request.deps));
    return request.answer.dryRun(would);
  }

  // A stored final outcome answers at once: a replay needs no credentials and no network.
  const idem = request.idempotency;
  const store = idem ? await idem.open() : undefined;
  try {
    // Hashed only for a store: a call without a key never hashes (node:crypto costs a `zot` read ~5 ms).
    const argsHash = idem && store ? requestHash(input, config) : '';
    const stored = idem && store ? await store.peek(idem.scope, idem.key, argsHash) : undefined;
    if (stored) return request.answer.replay(stored);
    return await checkedRun(request, { library, mutating, argsHash, store });
  } finally {
    await store?.close();
  }
}

/** Steps 4 to 8, once nothing offline refuses the call. */
async function checkedRun<R>(
  request: CallRequest<R>,
  known: { library: unknown; mutating: boolean; argsHash: string; store: IdempotencyStore | undefined },
): Promise<R> {
  const { tool, config, input } = request;
  const { library, mutating } = known;
  // 4–5. Credentials, then what the key may do (from its cached check).
  const probe = request.deps;
  if (requiresKey(tool, input)) {
    // A write may go to the desktop, which needs no Web API key: openWebLibrary decides.
    if (config.apiKey === undefined && !(library && mutating)) throw authMissing(config);
    if (library) {
      const { openWebLibrary } = await import('../library/web.js');
      await openWebLibrary(probe, input as LibraryArgs, { access: mutating ? 'write' : 'read' });
    } else await checkKey(probe);
  }

  // 6. Confirmation: only now can a person be asked, since nothing known refuses the call.
  if (request.tier === 'destructive' && !request.confirmed) {
    if (!request.ask) {
      throw new ZoteusError(
        'confirmation_required',
        `${request.label} is destructive and needs confirmation.`,
        {
          // Only the CLI gets here: an MCP client confirms destructive calls itself.
          hint: onlyOn('cli', 'Pass --yes to confirm, or --dry-run to see what it would do.'),
        },
      );
    }
    const { confirmationQuestion } = await import('./confirm.js');
    if (!(await request.ask(await confirmationQuestion(tool, request.label, input, probe)))) {
      throw new ZoteusError('confirmation_required', 'Cancelled: nothing was changed.', {
        hint: `Answer y to proceed${onlyOn('cli', ', or pass --yes')}.`,
        declined: true,
      });
    }
  }

  // 7–8. Idempotency, the work, the outcome.
  const work = async (
    runInput: Record<string, unknown>,
    writeIds: WriteIds,
    previous: StoredResult | undefined,
  ): Promise<Settled<R>> => {
    // Every call that changes the library journals its writes (core/journal): a replayed
    // idempotent call never gets here, so it is not journaled twice.
    const journal = changesLibrary(tool, request.tier)
      ? createRecorder({
          open: async () => (await openJournalOf(probe, () => probe.clock.now()))!,
          now: () => probe.clock.now(),
          requestId: request.requestId ?? `req_${freshWriteIds().writeToken('id')}`,
          tool: tool.name,
          args: journaledArgs(runInput, probe.redact),
          library: undefined,
          undo: tool.undo,
        })
      : undefined;
    const deps: Deps = { ...probe, writeIds, ...(journal ? { journal } : {}) };
    let finished: 'done' | 'partial' | 'failed' = 'failed';
    try {
      // Bounded last: a merged retry or one huge field must not make a message no client can take.
      const output = boundOutput(
        mergeRetry(tool, previous, checkedOutput(tool, await tool.run(runInput as never, deps))),
      );
      // A read that answers per entry (a bibliography of several keys) is partial as a write is.
      const outcome =
        mutating || Array.isArray(output.failed)
          ? classifyOutcome(output, { read: !mutating })
          : ({ kind: 'ok' } as const);
      if (outcome.kind === 'failed') throw outcome.error;
      finished = outcome.kind === 'partial' ? 'partial' : 'done';
      return await request.answer.success(
        output,
        outcome,
        previous ? (previous.input as Record<string, unknown>) : input,
      );
    } finally {
      await journal?.finish(finished);
    }
  };
  const idem = request.idempotency;
  if (!idem || !known.store) return (await work(input, freshWriteIds(), undefined)).value;
  return runIdempotent<R>({
    store: known.store,
    scope: idem.scope,
    key: idem.key,
    argsHash: known.argsHash,
    tool,
    input,
    run: work,
    fail: (error) => request.answer.failure(error),
    replay: (stored) => request.answer.replay(stored),
  });
}

/**
 * A handler's output against its schema: a mismatch is our bug, and clients would reject it
 * against `outputSchema`. What the schema holds is what is answered, on both surfaces.
 */
export function checkedOutput(tool: AnyTool, output: unknown): Record<string, unknown> {
  const checked = tool.output.safeParse(output);
  if (!checked.success) {
    const issues = checked.error.issues
      .map((issue) => `${issue.path.map(String).join('.') || '(output)'}: ${issue.message}`)
      .join('; ');
    throw new ZoteusError(
      'internal_error',
      `${tool.name} produced output that does not match its output schema (${issues}).`,
      { hint: 'This is a bug in Zoteus; please report it with the call that triggered it.' },
    );
  }
  return checked.data as Record<string, unknown>;
}
