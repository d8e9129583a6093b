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

/**
 * Limits shared with the other replicas of a shared deployment (core/store/shared-limits.ts):
 * a slot of the in-flight bound that holds across replicas, and the pause (`Backoff`,
 * `Retry-After`) one replica was asked for, which every replica then waits out.
 */
export interface SharedLimits {
  /** Waits for a slot; `pausedUntil`: the latest pause any replica recorded (clock milliseconds). */
  acquire(): Promise<{ release(): void; pausedUntil: number }>;
  /** Records a pause for every replica. Never throws: a lost record only costs another 429. */
  pause(until: number): void;
}
