/**
 * A clock whose sleeps return at once and move its time on, so paced requests and waited-out
 * `Retry-After`s cost a test nothing; `sleeps` records every wait asked for. Test code only.
 */
import type { Clock } from '../../../src/core/tool.js';

export interface FakeClock extends Clock {
  sleeps: number[];
}

export function fakeClock(start = Date.now()): FakeClock {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += Math.max(0, ms);
      await new Promise((r) => setImmediate(r));
    },
  };
}
