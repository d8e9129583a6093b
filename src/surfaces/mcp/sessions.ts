/**
 * The sessions of the older revisions (2025-11-25 and before) on Streamable HTTP, bounded:
 * at most `max` are open at once, and one that has had no request and no open stream for
 * `idleMs` is closed (its server and transport released). The 2026-07-28 revision has no
 * sessions and is not counted here.
 *
 * A session is busy while one of its HTTP exchanges is open (a request being answered, or the
 * GET stream a client keeps for server notifications); idle time counts from the end of the
 * last one. A client whose session was closed gets 404 for its id, and the specification has
 * it start a new session with `initialize`.
 *
 * With a state database (a shared deployment: `store`), each session is also a row of it
 * (core/store/sessions-sql.ts), so another replica can rebuild it: the count and the idle
 * close here are of this replica's sessions, and a sweep also keeps the rows of its busy
 * sessions fresh (a long stream is activity) and removes the rows of sessions idle on every
 * replica.
 */
import type { Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { SessionStore } from '../../core/store/sessions-sql.js';
import type { SetAsideArguments } from './protocol.js';

export interface LegacySession {
  readonly id: string;
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly setAside: SetAsideArguments;
  /** Open HTTP exchanges of this session. */
  busy: number;
  /** When the last exchange ended (or the session opened), in ms. */
  lastActive: number;
}

export interface SessionTableOptions {
  max: number;
  idleMs: number;
  now?: () => number;
  /** Told when a session is closed for idleness. */
  onExpire?: (session: LegacySession) => void;
  /** The sessions' rows in the state database, shared by every replica. */
  store?: SessionStore;
  /** Told when the state database fails during a sweep (the sweep goes on). */
  onStoreError?: (error: unknown) => void;
}

export class SessionTable {
  readonly #sessions = new Map<string, LegacySession>();
  readonly #max: number;
  readonly #idleMs: number;
  readonly #now: () => number;
  readonly #onExpire: (session: LegacySession) => void;
  readonly #store: SessionStore | undefined;
  readonly #onStoreError: (error: unknown) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: SessionTableOptions) {
    this.#max = options.max;
    this.#idleMs = options.idleMs;
    this.#now = options.now ?? Date.now;
    this.#onExpire = options.onExpire ?? (() => {});
    this.#store = options.store;
    this.#onStoreError = options.onStoreError ?? (() => {});
  }

  get store(): SessionStore | undefined {
    return this.#store;
  }

  get size(): number {
    return this.#sessions.size;
  }

  get max(): number {
    return this.#max;
  }

  get idleMs(): number {
    return this.#idleMs;
  }

  /** Sweeps idle sessions about ten times per idle period (at least every second, at most every minute). */
  start(): void {
    if (this.#timer) return;
    const every = Math.min(60_000, Math.max(1000, Math.floor(this.#idleMs / 10)));
    this.#timer = setInterval(() => void this.sweep(), every);
    this.#timer.unref();
  }

  get(id: string): LegacySession | undefined {
    return this.#sessions.get(id);
  }

  /** Whether a new session may open: expired sessions are closed first to make room. */
  async hasRoom(): Promise<boolean> {
    if (this.#sessions.size < this.#max) return true;
    await this.sweep();
    return this.#sessions.size < this.#max;
  }

  add(session: LegacySession): void {
    this.#sessions.set(session.id, session);
  }

  /** Forgets a session (closed by DELETE or by its transport); its server is closed by the caller. */
  remove(id: string): LegacySession | undefined {
    const session = this.#sessions.get(id);
    this.#sessions.delete(id);
    return session;
  }

  /** Marks one HTTP exchange of the session; call the returned function when it has ended. */
  begin(session: LegacySession): () => void {
    session.busy += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      session.busy -= 1;
      session.lastActive = this.#now();
    };
  }

  /**
   * Closes every session idle for `idleMs` or more. With a store, the rows of this replica's
   * busy sessions are marked active, and the rows idle for `idleMs` (on every replica) removed.
   */
  async sweep(): Promise<void> {
    const now = this.#now();
    const open = [...this.#sessions.values()];
    const expired = open.filter((s) => s.busy === 0 && now - s.lastActive >= this.#idleMs);
    for (const session of expired) {
      this.#sessions.delete(session.id);
      this.#onExpire(session);
    }
    await Promise.allSettled(expired.map((session) => session.server.close()));
    const store = this.#store;
    if (!store) return;
    try {
      for (const session of open.filter((s) => s.busy > 0)) await store.touch(session.id, now, this.#idleMs);
      await store.prune(now, this.#idleMs);
    } catch (error) {
      this.#onStoreError(error);
    }
  }

  async closeAll(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const open = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(open.map((session) => session.server.close()));
  }
}
