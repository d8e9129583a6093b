/**
 * A shared server never fetches a caller's URL from a private place (SSRF): the HTTP layer,
 * with `publicOnly`, refuses a loopback, private or reserved address, a name that resolves to
 * one, and a redirect to one, before anything is sent there.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/deps.js';
import { isPublicAddress } from '../../../src/core/http/public-address.js';
import { createHttpLayer, newCall } from '../../../src/core/http/index.js';
import { fetchPage } from '../../../src/core/items/page-metadata.js';
import { createRedactor } from '../../../src/core/redact.js';
import { ZoteusError } from '../../../src/core/errors.js';

let server: Server;
let base: string;
let hits = 0;
beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>x</title></head></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('public addresses only', () => {
  it.each([
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.20.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['::1', false],
    ['fd00::1', false],
    ['fe80::1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:127.0.0.1', false],
    ['93.184.216.34', true],
    ['2606:4700::1111', true],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  const send = (url: string, publicOnly: boolean) =>
    createHttpLayer({ clock: systemClock, redact: createRedactor(), timeoutMs: 5000, publicOnly }).send(
      {
        method: 'GET',
        url,
        server: 'test',
        headers: {},
        resendable: true,
        call: newCall(1000),
        failures: {
          rateLimited: () => new ZoteusError('rate_limited', 'x'),
          unreachable: (reason: string) => new ZoteusError('network_error', reason),
          answered: () => undefined,
        } as never,
      },
      (answer) => answer.status,
    );

  it('a loopback URL, or a name of one (localhost), is refused before anything is sent', async () => {
    hits = 0;
    for (const url of [`${base}/`, base.replace('127.0.0.1', 'localhost') + '/']) {
      const error = await send(url, true).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'validation_error', field: 'url' });
      expect((error as Error).message).toContain('which this shared server never fetches');
    }
    expect(hits).toBe(0);
    // Off a shared deployment the same request goes.
    expect(await send(`${base}/`, false)).toBe(200);
    expect(hits).toBe(1);
  });

  it('zot add --url on a shared deployment (deps with sharedState): a private page is refused, unfetched', async () => {
    hits = 0;
    const deps = {
      clock: systemClock,
      log: { warn: () => {}, debug: () => {} },
      sharedState: { db: {} as never, owner: 'tenant:1' },
    };
    const settings = { timeoutMs: 5000, retryBudgetMs: 1000, userAgent: 'test' } as never;
    await expect(fetchPage(deps, settings, new URL(`${base}/paper`))).rejects.toMatchObject({
      code: 'validation_error',
    });
    expect(hits).toBe(0);
    const { sharedState: _omit, ...local } = deps;
    await expect(fetchPage(local, settings, new URL(`${base}/paper`))).resolves.toMatchObject({
      url: `${base}/paper`,
    });
    expect(hits).toBe(1);
  });
});
