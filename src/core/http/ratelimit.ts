/**
 * Rate-limit state of one client (one server): the `Backoff`/`Retry-After` pause every later
 * request honours, and the per-call retry budget that bounds how long one call may wait. Used
 * by the outbound HTTP layer (send.ts) for every server Zoteus talks to.
 */
import type { CallContext, Clock } from './types.js';

/** Hard cap on 429/503 retries of one request, in case a clock never advances. */
export const MAX_RATE_RETRIES = 10;
/** Retries of a safe request after a reset or refused connection. */
export const MAX_NETWORK_RETRIES = 2;

export function newCall(budgetMs: number): CallContext {
  return { budgetMs, spentMs: 0, countedUntil: Number.NEGATIVE_INFINITY };
}

export interface RateLimiter {
  /** Clock time, never behind the end of a wait already done (fake sleeps may not advance it). */
  now(): number;
  /** Nothing is sent to the server before this time (Backoff, Retry-After). */
  pauseUntil(time: number): void;
  readonly pausedUntil: number;
  /**
   * Sleeps until `until`, charging the call's budget. Overlapping waits of parallel requests of
   * one call are charged once. Throws `exceeded(seconds)` at once if the wait would overrun it.
   */
  waitUntil(
    call: CallContext,
    until: number,
    exceeded: (retryAfterSeconds: number) => Error,
    /** Runs once the wait is accepted, before sleeping. */
    accepted?: () => void,
  ): Promise<void>;
}

export function createRateLimiter(clock: Clock): RateLimiter {
  let paused = 0;
  let floor = Number.NEGATIVE_INFINITY;
  const now = (): number => Math.max(clock.now(), floor);
  return {
    now,
    get pausedUntil() {
      return paused;
    },
    pauseUntil(time) {
      paused = Math.max(paused, time);
    },
    async waitUntil(call, until, exceeded, accepted) {
      const start = now();
      if (until <= start) return;
      const fresh = until - Math.max(start, call.countedUntil);
      if (fresh > 0 && call.spentMs + fresh > call.budgetMs) {
        throw exceeded(Math.max(1, Math.ceil((until - start) / 1000)));
      }
      if (fresh > 0) call.spentMs += fresh;
      call.countedUntil = Math.max(call.countedUntil, until);
      accepted?.();
      await clock.sleep(until - start);
      floor = Math.max(floor, until);
    },
  };
}

/** `Backoff: N` (seconds); undefined when absent or unreadable. */
export function parseBackoff(headers: Headers): number | undefined {
  const value = headers.get('backoff');
  if (value === null) return undefined;
  const seconds = Number(value.trim());
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

/** `Retry-After`: seconds or an HTTP date; milliseconds from `now`, undefined when absent. */
export function parseRetryAfter(headers: Headers, now: number): number | undefined {
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** `Retry-After` (seconds or a date), or OpenAI's finer `retry-after-ms`; undefined when absent. */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const ms = headers.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  return parseRetryAfter(headers, now);
}

/** Capped exponential backoff with jitter, for a 429/503 that gives no Retry-After. */
export function backoffDelayMs(attempt: number, random: () => number): number {
  const cap = Math.min(32_000, 1000 * 2 ** attempt);
  // Half fixed, half random: retries of parallel requests spread out but never become instant.
  return Math.round(cap / 2 + (random() * cap) / 2);
}

/** Short pause before resending a safe request after a reset: the server is likely fine. */
export function networkRetryDelayMs(attempt: number, random: () => number): number {
  return Math.round(200 * 2 ** attempt * (0.5 + random() / 2));
}
