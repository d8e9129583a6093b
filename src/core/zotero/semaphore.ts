/**
 * Counting semaphore owned by one client: every request of that client takes a slot, so the
 * server never sees more than its documented 4 requests in flight from us, whatever mix of
 * listings, batch reads and writes runs at once.
 */
export interface Semaphore {
  acquire(): Promise<() => void>;
  readonly inFlight: number;
}

export function createSemaphore(max: number): Semaphore {
  let inFlight = 0;
  const waiting: Array<() => void> = [];

  const release = (): void => {
    const next = waiting.shift();
    // Hand the slot straight to the next waiter so a newcomer cannot overtake it.
    if (next) next();
    else inFlight--;
  };

  return {
    get inFlight() {
      return inFlight;
    },
    acquire() {
      let released = false;
      const once = (): void => {
        if (released) return;
        released = true;
        release();
      };
      if (inFlight < max) {
        inFlight++;
        return Promise.resolve(once);
      }
      return new Promise((resolve) => waiting.push(() => resolve(once)));
    },
  };
}
