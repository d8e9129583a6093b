/**
 * One `tools/call`, in the order of checks of agent-interface.md: the tool exists, read-only
 * mode allows it, the arguments are valid, credentials are there when it needs them; then, with
 * an `idempotency_key`, the replay or resumption of the same request (core/call); then the
 * work, then the output is checked against its schema. Every failure becomes an `isError`
 * result, never a JSON-RPC error, so the agent reads the code and the hint.
 */
import { SCOPE_TOOLSET_PREFIX } from './auth/settings.js';
import type { CallToolResult, ProgressToken } from '@modelcontextprotocol/server';
import { PARTIAL_EXIT_CODE, ZoteusError } from '../../core/errors.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, openIdempotencyStoreFor } from '../../core/call/idempotency.js';
import { runCall } from '../../core/call/run.js';
import type { AnyTool, Deps, ProgressEvent } from '../../core/tool.js';
import { withRequestId } from './protocol.js';
import { errorResult, successResult } from './results.js';
import { argumentsObject, parseArguments } from './validate.js';

export interface CallRequest {
  name: string;
  /** As the client sent it: anything but an object is refused as a validation_error. */
  arguments?: unknown;
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
  /**
   * Names this call in the result's `_meta` (`zoteus/request_id`). A replayed idempotent call
   * answers with the stored result, so it names the request that did the work.
   */
  requestId?: string | undefined;
  /** Declarations this server leaves out by its toolsets, with their toolset (server.ts). */
  notOffered?: ReadonlyMap<string, string> | undefined;
  /** Who left them out: the server's ZOTEUS_TOOLSETS, or the toolsets a sign-in's grant names. */
  toolsetsChosenBy?: 'server' | 'grant' | undefined;
}

/** The `_meta` key of a mutating result that says where its writes landed: `desktop` or `cloud`. */
export const WRITTEN_TO_META_KEY = 'zoteus/written_to';

export async function callTool(
  tools: ReadonlyMap<string, AnyTool>,
  request: CallRequest,
  deps: Deps,
  options: CallOptions = {},
): Promise<CallToolResult> {
  const named = (result: CallToolResult): CallToolResult =>
    options.requestId === undefined ? result : withRequestId(result, options.requestId);
  try {
    const tool = tools.get(request.name);
    const toolset = tool ? undefined : options.notOffered?.get(request.name);
    if (toolset !== undefined && options.toolsetsChosenBy === 'grant') {
      throw new ZoteusError(
        'not_found',
        `${request.name} is not offered to this sign-in: it is in the toolset "${toolset}", which the toolsets your sign-in asked for leave out.`,
        {
          hint: `Sign in again asking for the scope ${SCOPE_TOOLSET_PREFIX}${toolset} as well (or ${SCOPE_TOOLSET_PREFIX}all).`,
        },
      );
    }
    if (toolset !== undefined) {
      throw new ZoteusError(
        'not_found',
        `${request.name} is not offered by this server: it is in the toolset "${toolset}", which ZOTEUS_TOOLSETS leaves out.`,
        { hint: `Start the server with ZOTEUS_TOOLSETS=default,${toolset} (or all) to offer it.` },
      );
    }
    if (!tool) {
      throw new ZoteusError('not_found', `There is no tool named ${request.name}.`, {
        hint: 'Call tools/list for the tools this server offers.',
      });
    }
    const { args, idempotencyKey } = splitIdempotencyKey(tool, argumentsObject(tool, request.arguments));
    const input = parseArguments(tool, args);
    // Where this call's writes land (set by the routing of writes), for `zoteus/written_to`.
    const written: { to?: 'desktop' | 'cloud' } = {};
    const mutating =
      (tool.callTier?.(input as never) ?? tool.tier) !== 'read' && !(tool.writesFilesOnly ?? false);
    const answer = (result: CallToolResult, exitCode: number, partial: boolean, output?: unknown) => {
      const value = named(result);
      return {
        value,
        bytes: JSON.stringify(value),
        exitCode,
        partial,
        ...(output !== undefined ? { output } : {}),
      };
    };
    return await runCall<CallToolResult>({
      tool,
      tier: tool.callTier?.(input as never) ?? tool.tier,
      label: tool.name,
      config: deps.config,
      input,
      // A client confirms a destructive call itself (destructiveHint); nobody can be asked here.
      confirmed: true,
      requestId: options.requestId,
      deps: { ...deps, written },
      idempotency:
        idempotencyKey === undefined
          ? undefined
          : {
              open: () => openIdempotencyStoreFor(deps),
              // Scoped per tool and per caller, apart from the CLI's command paths.
              scope: `mcp:${options.caller ?? 'local'}:${tool.name}`,
              key: idempotencyKey,
            },
      answer: {
        dryRun: () => {
          throw new ZoteusError('internal_error', 'MCP calls have no dry-run control.');
        },
        success: (output, outcome, original) => {
          const partial = outcome.kind === 'partial';
          const base = successResult(tool, output, original, deps.redact, outcome);
          // The output schema is the tool's: where a write landed travels in `_meta`.
          const result = mutating
            ? { ...base, _meta: { ...base._meta, [WRITTEN_TO_META_KEY]: written.to ?? 'cloud' } }
            : base;
          return answer(result, partial ? PARTIAL_EXIT_CODE : 0, partial, output);
        },
        failure: (error) => answer(errorResult(error, deps.redact), error.exitCode, false),
        replay: (stored) => JSON.parse(stored.stdout) as CallToolResult,
      },
    });
  } catch (error) {
    return named(errorResult(error, deps.redact));
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
