/**
 * Streamed answers of the outbound HTTP layer (`stream: true`, a file download): the body
 * handed over chunk by chunk, the timeout applied to each wait for a chunk (a slow but moving
 * download finishes, a stalled one fails as the client's network error), a reset mid-body,
 * the in-flight slot held until the body ends, and `homeHeaders` kept at home on a redirect to
 * another origin, as credentials are. Against loopback servers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import {
  createHttpLayer,
  newCall,
  type Failures,
  type HttpRequest,
  type Slots,
} from '../../../src/core/http/index.js';
import { createRedactor } from '../../../src/core/redact.js';
import { caught, fakeClock } from '../zotero/helpers.js';

const KEY = 'zk-7Hq2-Wm9x-Lp4R-tV8n-Bc3D';
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let home: { server: Server; url: string; handler: Handler; seen: IncomingMessage['headers'][] };
let other: { server: Server; url: string; handler: Handler; seen: IncomingMessage['headers'][] };

async function serve(): Promise<typeof home> {
  const box = { handler: (() => undefined) as Handler, seen: [] as IncomingMessage['headers'][] };
  const server = createServer((req, res) => {
    box.seen.push(req.headers);
    box.handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return Object.assign(box, { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

beforeAll(async () => {
  home = await serve();
  other = await serve();
});
afterAll(async () => {
  for (const s of [home, other]) {
    s.server.closeAllConnections();
    await new Promise<void>((r) => s.server.close(() => r()));
  }
});

const failures: Failures = {
  rateLimited: (seconds) => new ZoteusError('rate_limited', `wait ${seconds} s`),
  unreachable: (reason, timedOut) =>
    new ZoteusError('network_error', `unreachable (${timedOut ? 'timed out' : 'failed'}): ${reason} ${KEY}`),
};

function layerOf(timeoutMs: number, slots?: Slots) {
  return createHttpLayer({
    clock: fakeClock(),
    redact: createRedactor([KEY]),
    timeoutMs,
    credentialOrigin: home.url,
    homeHeaders: (name) => /^zotero-|^if-/i.test(name),
    ...(slots ? { slots } : {}),
  });
}

function request(path: string, extra: Partial<HttpRequest> = {}): HttpRequest {
  return {
    method: 'GET',
    url: `${home.url}${path}`,
    server: 'the test server',
    headers: { 'Zotero-API-Key': KEY, 'Zotero-API-Version': '3', 'If-Match': 'abc', 'X-Plain': 'kept' },
    resendable: true,
    call: newCall(60_000),
    failures,
    stream: true,
    ...extra,
  };
}

async function drain(stream: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const c of stream ?? []) chunks.push(c);
  return Buffer.concat(chunks);
}

/** Writes `count` chunks of `size` bytes, `gapMs` apart, then (unless `stall`) ends. */
function dribble(
  count: number,
  size: number,
  gapMs: number,
  end: 'end' | 'stall' | 'reset' = 'end',
): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    let sent = 0;
    const next = (): void => {
      if (sent === count) {
        if (end === 'end') res.end();
        else if (end === 'reset') res.socket?.resetAndDestroy();
        return;
      }
      res.write(Buffer.alloc(size, sent++ % 256));
      setTimeout(next, gapMs);
    };
    next();
  };
}

describe('stream: true', () => {
  it('hands the body over in chunks, the text left empty', async () => {
    home.handler = dribble(32, 64 * 1024, 0);
    const got = await layerOf(5_000).send(request('/file'), (a) => a);
    expect(got.status).toBe(200);
    expect(got.text).toBe('');
    const body = await drain(got.stream);
    expect(body.length).toBe(32 * 64 * 1024);
    expect(body[64 * 1024 * 31]).toBe(31);
  });

  it('the timeout applies to each wait for a chunk: a slow download that keeps moving finishes', async () => {
    home.handler = dribble(8, 1000, 100);
    const got = await layerOf(400).send(request('/slow'), (a) => a);
    expect((await drain(got.stream)).length).toBe(8000);
  });

  it('a download that stalls fails as the client’s network error, redacted, and frees its slot', async () => {
    let held = 0;
    let waiting: Array<() => void> = [];
    const slots: Slots = {
      acquire: async () => {
        if (held >= 1) await new Promise<void>((r) => waiting.push(r));
        held++;
        return () => {
          held--;
          const w = waiting;
          waiting = [];
          w.forEach((r) => r());
        };
      },
    };
    const layer = layerOf(300, slots);
    home.handler = dribble(2, 1000, 10, 'stall');
    const got = await layer.send(request('/stall'), (a) => a);
    expect(held).toBe(1);
    const error = await caught(drain(got.stream));
    expect(error.code).toBe('network_error');
    expect(error.message).toBe('unreachable (timed out): no data for 300 ms [REDACTED]');
    expect(held).toBe(0);
  });

  it('a reset mid-body is the client’s network error', async () => {
    home.handler = dribble(3, 1000, 10, 'reset');
    const got = await layerOf(5_000).send(request('/reset'), (a) => a);
    const error = await caught(drain(got.stream));
    expect(error.code).toBe('network_error');
    expect(error.message).toMatch(/^unreachable \(failed\): /);
  });

  it('a client’s own wording of a broken body is used when it has one', async () => {
    home.handler = dribble(3, 1000, 10, 'reset');
    const broken = (reason: string) => new ZoteusError('network_error', `broke off: ${reason} ${KEY}`);
    const got = await layerOf(5_000).send(request('/reset', { failures: { ...failures, broken } }), (a) => a);
    const error = await caught(drain(got.stream));
    expect(error.message).toMatch(/^broke off: \S+ \[REDACTED\]$/);
  });

  it('an error answer is read as text, as without stream', async () => {
    home.handler = (_req, res) => void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
    const got = await layerOf(5_000).send(request('/none'), (a) => a);
    expect(got).toMatchObject({ status: 404, text: 'Not found' });
    expect(got.stream).toBeUndefined();
  });
});

describe('homeHeaders', () => {
  it('stay with the credential origin: a redirect elsewhere sends neither them nor the key', async () => {
    home.seen.length = 0;
    other.seen.length = 0;
    home.handler = (_req, res) => void res.writeHead(302, { Location: `${other.url}/bytes` }).end();
    other.handler = (_req, res) => void res.writeHead(200).end('bytes');
    const got = await layerOf(5_000).send(request('/file'), (a) => a);
    expect((await drain(got.stream)).toString()).toBe('bytes');
    expect(home.seen[0]).toMatchObject({
      'zotero-api-key': KEY,
      'zotero-api-version': '3',
      'if-match': 'abc',
    });
    const abroad = other.seen[0]!;
    expect(Object.keys(abroad).filter((h) => /^(zotero-|if-|authorization)/.test(h))).toEqual([]);
    expect(abroad['x-plain']).toBe('kept');
  });

  it('are kept on a redirect within the origin', async () => {
    home.seen.length = 0;
    home.handler = (req, res) =>
      req.url === '/here'
        ? void res.writeHead(302, { Location: '/landed' }).end()
        : void res.writeHead(200).end('ok');
    const got = await layerOf(5_000).send(request('/here'), (a) => a);
    await drain(got.stream);
    expect(home.seen[1]).toMatchObject({ 'zotero-api-key': KEY, 'zotero-api-version': '3' });
  });
});
