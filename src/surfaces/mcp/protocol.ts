/**
 * What the surface needs to know of the protocol's revisions, beside what the SDK does.
 *
 * Two generations are served from the same declarations:
 *   - 2026-07-28 (stateless): no `initialize`, no session; every request carries its revision,
 *     client information and capabilities in `_meta` (`io.modelcontextprotocol/*`), and on HTTP
 *     the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers.
 *   - 2025-11-25, 2025-06-18, 2025-03-26 (and older): `initialize`, then a connection (stdio)
 *     or a session (`Mcp-Session-Id` on HTTP) that keeps the negotiated revision.
 * The SDK decides which generation a request belongs to (transports.ts, http.ts) and checks
 * the envelope; a handler reads the revision of its own request with `revisionOf`.
 *
 * Every request answered by a handler gets a request id (`zoteus/request_id` in the result's
 * `_meta`, in `data` of a JSON-RPC error), as a CLI envelope carries `meta.request_id`, and
 * one log line that names it with the revision, the method and the outcome.
 */
import { randomBytes } from 'node:crypto';
import {
  PROTOCOL_VERSION_META_KEY,
  UnsupportedProtocolVersionError,
  type JSONRPCErrorResponse,
  type RequestId,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';

/** The stateless revision (SEP-2575/2567) and the initialize-based ones clients still use. */
export const MODERN_REVISION = '2026-07-28';
export const LEGACY_REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

/** Where every result (and every error's `data`) names the request. */
export const REQUEST_ID_META_KEY = 'zoteus/request_id';

/** A name for one request in results and logs: 12 hex digits, like the CLI's. */
export function newRequestId(): string {
  return randomBytes(6).toString('hex');
}

/**
 * The revision a request was sent under: the one its `_meta` envelope claims (2026-07-28),
 * else the one its connection or session negotiated with `initialize`.
 */
export function revisionOf(server: Server, ctx: Pick<ServerContext, 'mcpReq'>): string {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const claimed = envelope?.[PROTOCOL_VERSION_META_KEY];
  if (typeof claimed === 'string') return claimed;
  // Deprecated in the SDK for 2026-07-28 requests only; it is what a 2025 connection negotiated.
  return server.getNegotiatedProtocolVersion() ?? 'unknown';
}

/**
 * The `-32022` answer to a request whose `_meta` envelope claims a revision other than the
 * stateless one this server speaks; undefined for any other message. The SDK checks the
 * opening request of a stdio connection and every HTTP request; stdio.ts checks the rest.
 */
export function unsupportedRevision(message: unknown): JSONRPCErrorResponse | undefined {
  const m = message as {
    id?: unknown;
    method?: unknown;
    params?: { _meta?: Record<string, unknown> };
  } | null;
  if (m === null || typeof m !== 'object' || typeof m.method !== 'string') return undefined;
  if (typeof m.id !== 'string' && typeof m.id !== 'number') return undefined;
  const claimed = m.params?._meta?.[PROTOCOL_VERSION_META_KEY];
  if (claimed === undefined || claimed === MODERN_REVISION) return undefined;
  const error = new UnsupportedProtocolVersionError({
    supported: [MODERN_REVISION],
    requested: typeof claimed === 'string' ? claimed : JSON.stringify(claimed),
  });
  return { jsonrpc: '2.0', id: m.id, error: { code: error.code, message: error.message, data: error.data } };
}

/** The result with the request id added to its `_meta` (a copy; the result may be shared). */
export function withRequestId<T extends { _meta?: Record<string, unknown> | undefined }>(
  result: T,
  requestId: string,
): T {
  return { ...result, _meta: { ...result._meta, [REQUEST_ID_META_KEY]: requestId } };
}

/**
 * `tools/call` arguments that are not an object (`"x"`, `null`, `[1]`), set aside before the
 * SDK sees the request: its schema would answer them with a bare `-32602` carrying a zod
 * dump, and the tool's own answer (a `validation_error` result) is what an agent can act on.
 * The transport takes the value out of the message and keeps it here under the request's
 * JSON-RPC id; the `tools/call` handler takes it back (call.ts refuses it by name).
 * Bounded: a request the SDK refuses before its handler runs leaves an entry behind.
 */
export class SetAsideArguments {
  static readonly MAX = 64;
  readonly #byId = new Map<RequestId, unknown>();

  /** The message to hand the SDK: unchanged unless it is a `tools/call` with such arguments. */
  inbound<M>(message: M): M {
    if (Array.isArray(message)) return message.map((m: unknown) => this.inbound(m)) as M;
    const m = message as { method?: unknown; id?: unknown; params?: unknown } | null;
    if (m === null || typeof m !== 'object' || m.method !== 'tools/call') return message;
    if (typeof m.id !== 'string' && typeof m.id !== 'number') return message;
    // An entry left by an earlier request with this id must not answer for this one.
    this.#byId.delete(m.id);
    const params = m.params as Record<string, unknown> | null | undefined;
    if (params === null || typeof params !== 'object' || !Object.hasOwn(params, 'arguments')) return message;
    const args = params.arguments;
    if (args !== null && typeof args === 'object' && !Array.isArray(args)) return message;
    if (this.#byId.size >= SetAsideArguments.MAX) this.#byId.delete(this.#byId.keys().next().value!);
    this.#byId.set(m.id, args);
    const { arguments: _set, ...rest } = params;
    return { ...m, params: rest } as M;
  }

  /** The arguments set aside for this request, if any (`{ found: false }` when none were). */
  take(id: RequestId): { found: true; value: unknown } | { found: false } {
    if (!this.#byId.has(id)) return { found: false };
    const value = this.#byId.get(id);
    this.#byId.delete(id);
    return { found: true, value };
  }
}
