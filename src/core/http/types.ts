/**
 * Types of the outbound HTTP layer (send.ts), kept apart from the code so the clients' own type
 * files can use them without pulling in fetch.
 */
import type { Clock } from '../tool.js';

export type { Clock };

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/**
 * One top-level operation ("call"): the retry budget is shared by every request it makes.
 * Pass the same context to several requests to make them one call (the write engine does).
 */
export interface CallContext {
  readonly budgetMs: number;
  /** Wait time already spent (overlapping waits of parallel requests count once). */
  spentMs: number;
  /** End of the latest wait already counted. */
  countedUntil: number;
}

/** An in-flight limit: every attempt holds a slot while it is on the wire. */
export interface Slots {
  acquire(): Promise<() => void>;
}
