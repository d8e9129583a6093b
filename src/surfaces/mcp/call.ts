/**
 * One `tools/call`, in the order of checks of agent-interface.md: the tool exists, read-only
 * mode allows it, the arguments are valid, credentials are there when it needs them; then, with
 * an `idempotency_key`, the replay or resumption of the same request (core/call); then the
 * work, then the output is checked against its schema. Every failure becomes an `isError`
 * result, never a JSON-RPC error, so the agent reads the code and the hint.
 */
import type { CallToolResult, ProgressToken } from '@modelcontextprotocol/sdk/types.js';
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
import { requiresKey, type AnyTool, type Deps, type ProgressEvent } from '../../core/tool.js';
import { errorResult, successResult } from './results.js';
import { checkOutput, parseArguments } from './validate.js';

export interface CallRequest {
  name: string;
  arguments?: Record<string, unknown> | undefined;
}

/** Sends one `notifications/progress`; supplied by the server from the request's `extra`. */
export type SendProgress = (params: {
  progressToken: ProgressToken;
  progress: number;
  total?: number;
  message?: string;
}) => Promise<void>;

/**
 * Progress events as `notifications/progress` when the client asked for them with a
 * progressToken; dropped otherwise. MCP wants `progress` to increase, so repeats are skipped.
 */
export function progressForwarder(
  token: ProgressToken | undefined,
  send: SendProgress,
): (event: ProgressEvent) => void {
  if (token === undefined) return () => {};
  let last = -1;
  return (event) => {
    const progress = event.done ?? (event.event === 'complete' ? (event.total ?? last + 1) : 0);
    if (progress <= last) return;
    last = progress;
    // Progress is advisory: a client that went away must not fail the call.
    send({
      progressToken: token,
      progress,
      ...(event.total !== undefined ? { total: event.total } : {}),
      message: event.phase,
    }).catch(() => {});
  };
}

/** The MCP spelling of `--idempotency-key`, offered by every mutating tool (schemas.ts). */
export const IDEMPOTENCY_ARG = 'idempotency_key';

export interface CallOptions {
  /** On a shared deployment, who is calling: idempotency keys are scoped per caller. */
  caller?: string | undefined;
}

export async function callTool(
  tools: ReadonlyMap<string, AnyTool>,
  readOnly: boolean,
  request: CallRequest,
  deps: Deps,
  options: CallOptions = {},
): Promise<CallToolResult> {
  try {
    const tool = tools.get(request.name);
    if (!tool) {
      throw new ZoteusError('not_found', `There is no tool named ${request.name}.`, {
        hint: 'Call tools/list for the tools this server offers.',
      });
    }
    // Checked on call as well as hidden from the list: a client may call a name it cached.
    if (readOnly && tool.tier !== 'read') {
      throw new ZoteusError(
        'permission_denied',
        `${tool.name} is a ${tool.tier} tool, and this server runs in read-only mode (ZOTEUS_READ_ONLY).`,
        {
          hint: 'Only read tools are available; the user can turn read-only mode off if the change is wanted.',
        },
      );
    }
    const { args, idempotencyKey } = splitIdempotencyKey(tool, request.arguments);
    const input = parseArguments(tool, args);
    // The library address is part of the input: a bad one is refused before credentials.
    if ('library_id' in tool.input.shape) resolveLibrary(input as LibraryArgs, deps.config);

    const execute = async (
      runInput: Record<string, unknown>,
      writeIds: WriteIds,
      previous: StoredResult | undefined,
    ): Promise<Settled<CallToolResult>> => {
      if (requiresKey(tool, runInput) && deps.config.apiKey === undefined) {
        throw new ZoteusError(
          'auth_missing',
          `${tool.name} needs a Zotero API key, and none is configured.`,
          {
            hint: 'Set ZOTERO_API_KEY in the environment of the MCP server (create a key at https://www.zotero.org/settings/keys).',
          },
        );
      }
      // The ids are per call: the server's deps outlive it.
      const output = mergeRetry(
        tool,
        previous,
        checkOutput(tool, await tool.run(runInput, { ...deps, writeIds })),
      );
      // A write where every entry failed is an error; some failed is a partial success.
      const outcome = tool.tier === 'read' ? ({ kind: 'ok' } as const) : classifyOutcome(output);
      if (outcome.kind === 'failed') throw outcome.error;
      const result = successResult(
        tool,
        output,
        previous ? (previous.input as Record<string, unknown>) : input,
        deps.redact,
        outcome,
      );
      const partial = outcome.kind === 'partial';
      return {
        value: result,
        bytes: JSON.stringify(result),
        exitCode: partial ? PARTIAL_EXIT_CODE : 0,
        partial,
        output,
      };
    };

    if (idempotencyKey === undefined) return (await execute(input, freshWriteIds(), undefined)).value;
    const { openIdempotencyStore } = await import('../../core/store/idempotency.js');
    const store = await openIdempotencyStore(idempotencyStorePath(deps.config));
    try {
      return await runIdempotent<CallToolResult>({
        store,
        // Scoped per tool and per caller, apart from the CLI's command paths.
        scope: `mcp:${options.caller ?? 'local'}:${tool.name}`,
        key: idempotencyKey,
        argsHash: requestHash(input, deps.config),
        tool,
        input,
        run: execute,
        fail: (error) => {
          const result = errorResult(error, deps.redact);
          return { value: result, bytes: JSON.stringify(result), exitCode: error.exitCode, partial: false };
        },
        replay: (stored) => JSON.parse(stored.stdout) as CallToolResult,
      });
    } finally {
      store.close();
    }
  } catch (error) {
    return errorResult(error, deps.redact);
  }
}

/**
 * Takes `idempotency_key` out of a mutating tool's arguments (it is the surface's, not the
 * tool's input). On a read tool it stays, and is refused as the unknown argument it is there.
 */
function splitIdempotencyKey(
  tool: AnyTool,
  raw: Record<string, unknown> | undefined,
): { args: Record<string, unknown> | undefined; idempotencyKey: string | undefined } {
  if (
    tool.tier === 'read' ||
    raw === null ||
    typeof raw !== 'object' ||
    Array.isArray(raw) ||
    !Object.hasOwn(raw, IDEMPOTENCY_ARG)
  ) {
    return { args: raw, idempotencyKey: undefined };
  }
  const { [IDEMPOTENCY_ARG]: value, ...args } = raw;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ZoteusError(
      'validation_error',
      `${IDEMPOTENCY_ARG} must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
      {
        field: IDEMPOTENCY_ARG,
        hint: 'Pass the same key again to retry the same request; a new key for a new one.',
      },
    );
  }
  return { args, idempotencyKey: value };
}
