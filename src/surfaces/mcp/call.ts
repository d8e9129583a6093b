/**
 * One `tools/call`, in the order of checks of agent-interface.md: the tool exists, read-only
 * mode allows it, the arguments are valid, credentials are there when it needs them; then the
 * work, then the output is checked against its schema. Every failure becomes an `isError`
 * result, never a JSON-RPC error, so the agent reads the code and the hint.
 */
import type { CallToolResult, ProgressToken } from '@modelcontextprotocol/sdk/types.js';
import { ZoteusError } from '../../core/errors.js';
import { resolveLibrary, type LibraryArgs } from '../../core/library/address.js';
import { classifyOutcome } from '../../core/outcome.js';
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

export async function callTool(
  tools: ReadonlyMap<string, AnyTool>,
  readOnly: boolean,
  request: CallRequest,
  deps: Deps,
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
    const input = parseArguments(tool, request.arguments);
    // The library address is part of the input: a bad one is refused before credentials.
    if ('library_id' in tool.input.shape) resolveLibrary(input as LibraryArgs, deps.config);
    if (requiresKey(tool, input) && deps.config.apiKey === undefined) {
      throw new ZoteusError('auth_missing', `${tool.name} needs a Zotero API key, and none is configured.`, {
        hint: 'Set ZOTERO_API_KEY in the environment of the MCP server (create a key at https://www.zotero.org/settings/keys).',
      });
    }
    const output = checkOutput(tool, await tool.run(input, deps));
    // A write where every entry failed is an error; some failed is a partial success.
    const outcome = tool.tier === 'read' ? ({ kind: 'ok' } as const) : classifyOutcome(output);
    if (outcome.kind === 'failed') throw outcome.error;
    return successResult(tool, output, input, deps.redact, outcome);
  } catch (error) {
    return errorResult(error, deps.redact);
  }
}
