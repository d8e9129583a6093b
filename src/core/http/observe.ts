/**
 * What a server's operator may watch of the outbound requests of its Web API clients: every
 * answer's status, and each wait the layer makes (a `Backoff` pause, a 429/503 waited out, the
 * short delay before resending after a reset). The hook wraps what the client is built with (its
 * `fetch` and its clock, whose `sleep` is the layer's only wait), so the layer itself is unchanged
 * and nothing is kept in module state: the observer belongs to whoever built the deps.
 */
import type { Clock, FetchLike } from './types.js';

export interface UpstreamObserver {
  /** An answer arrived (a redirect, a 429 and the final answer each count once). */
  answered(status: number): void;
  /** A request could not be sent or had no answer (refused, reset, timeout). */
  failed(): void;
  /** The client slept this long before sending again. */
  waited(ms: number): void;
}

/** `fetch` (default the global one) that tells `observer` of each answer and failure. */
export function observedFetch(observer: UpstreamObserver, inner?: FetchLike): FetchLike {
  const send: FetchLike = inner ?? ((input, init) => fetch(input, init));
  return async (input, init) => {
    let response: Response;
    try {
      response = await send(input, init);
    } catch (error) {
      observer.failed();
      throw error;
    }
    observer.answered(response.status);
    return response;
  };
}

/** The clock whose sleeps are reported to `observer` as waits. */
export function observedClock(observer: UpstreamObserver, inner: Clock): Clock {
  return {
    now: () => inner.now(),
    sleep: async (ms) => {
      if (ms > 0) observer.waited(ms);
      await inner.sleep(ms);
    },
  };
}
