/** Helpers for servers the tests start: a free loopback port, and waiting until one answers. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Waits until `url` answers 2xx (a server just started), at most `timeoutMs`; else fails
 * saying so, with what the server wrote (`output`), instead of a later, unrelated failure.
 */
export async function waitUntilUp(
  url: string,
  output: () => string = () => '',
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const up = await fetch(url).catch(() => undefined);
    await up?.body?.cancel().catch(() => undefined);
    if (up?.ok) return;
    if (Date.now() >= deadline) {
      throw new Error(
        `${url} did not answer within ${timeoutMs} ms. The server wrote:\n${output() || '(nothing)'}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
