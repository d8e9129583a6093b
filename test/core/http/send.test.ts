/**
 * The shared outbound HTTP layer (core/http/send.ts) against a loopback server: redirects
 * followed by hand with credentials kept to their origin, writes never forwarded, a bounded
 * number of hops, and every error and log line that leaves it redacted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import {
  createHttpLayer,
  excerpt,
  MAX_REDIRECTS,
  newCall,
  type Failures,
  type HttpLayer,
  type HttpRequest,
} from '../../../src/core/http/index.js';
import { createRedactor, REDACTED } from '../../../src/core/redact.js';
import { caught, errorTexts, fakeClock } from '../zotero/helpers.js';
import {
  CREDENTIAL_HEADER_NAMES,
  leakedRuns,
  startHostileServer,
  type HostileServer,
} from './hostile-server.js';

/** Hyphens, as a compatible server's keys have them. */
const KEY = 'zk-7Hq2-Wm9x-Lp4R-tV8n-Bc3D';

let server: HostileServer;
let layer: HttpLayer;
let lines: string[];
beforeAll(async () => {
  server = await startHostileServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.received.length = 0;
  server.otherReceived.length = 0;
  lines = [];
  layer = createHttpLayer({
    clock: fakeClock(),
    redact: createRedactor([KEY]),
    timeoutMs: 5_000,
    log: (line) => lines.push(line),
    random: () => 0.5,
    credentialOrigin: new URL(server.url).origin,
  });
});

const failures: Failures = {
  rateLimited: (seconds) => new ZoteusError('rate_limited', `wait ${seconds} s`),
  unreachable: (reason) => new ZoteusError('network_error', `unreachable: ${reason}`),
};

function request(extra: Partial<HttpRequest> = {}): HttpRequest {
  return {
    method: 'GET',
    url: `${server.url}/things?limit=1`,
    server: 'the test server',
    headers: { 'Zotero-API-Key': KEY, authorization: `Bearer ${KEY}`, 'X-Plain': 'kept' },
    resendable: true,
    call: newCall(60_000),
    failures,
    ...extra,
  };
}

const answer = (r: HttpRequest) => layer.send(r, (a) => a);

describe('redirects', () => {
  it('follows a GET to another origin without any credential header, keeping the others', async () => {
    server.set({ mode: 'redirect', redirectStatus: 302 });
    const got = await answer(request());
    expect(got.status).toBe(404);
    expect(got.url).toBe(`${server.otherUrl}/things?limit=1`);
    expect(server.received[0]?.headers['zotero-api-key']).toBe(KEY);
    expect(server.otherReceived).toHaveLength(1);
    const forwarded = server.otherReceived[0]!.headers;
    for (const name of CREDENTIAL_HEADER_NAMES) expect(forwarded[name]).toBeUndefined();
    expect(forwarded['x-plain']).toBe('kept');
  });

  it('keeps the credentials on a redirect within the same origin', async () => {
    server.set({ mode: 'redirect-same', redirectStatus: 301, body: '{"ok":true}' });
    const got = await answer(request());
    expect(got).toMatchObject({ status: 200, text: '{"ok":true}' });
    expect(server.received.map((r) => r.url)).toEqual(['/things?limit=1', '/landed/things?limit=1']);
    expect(server.received[1]?.headers['zotero-api-key']).toBe(KEY);
  });

  it('strips credentials on another origin even when the layer was not told which origin is theirs', async () => {
    const bare = createHttpLayer({ clock: fakeClock(), redact: createRedactor([KEY]), timeoutMs: 5_000 });
    server.set({ mode: 'redirect', redirectStatus: 307 });
    await bare.send(request(), (a) => a);
    expect(server.otherReceived[0]?.headers['zotero-api-key']).toBeUndefined();
    expect(server.otherReceived[0]?.headers.authorization).toBeUndefined();
  });

  it.each([301, 302, 303, 307, 308])('never sends a POST on to another origin (HTTP %i)', async (status) => {
    server.set({ mode: 'redirect', redirectStatus: status });
    const error = await caught(answer(request({ method: 'POST', body: '{"secret":"library data"}' })));
    expect(error.code).toBe('api_error');
    expect(error.message).toContain(`redirected POST ${server.url}/things?limit=1`);
    expect(server.otherReceived).toHaveLength(0);
  });

  it('follows a 307/308 of a POST within the origin with its body and key; refuses a 302 that would turn it into a GET', async () => {
    server.set({ mode: 'redirect-same', redirectStatus: 308, body: '{"saved":1}' });
    const got = await answer(request({ method: 'POST', body: '{"n":1}' }));
    expect(got.text).toBe('{"saved":1}');
    expect(server.received[1]).toMatchObject({
      method: 'POST',
      body: '{"n":1}',
      url: '/landed/things?limit=1',
    });
    expect(server.received[1]?.headers['zotero-api-key']).toBe(KEY);

    server.received.length = 0;
    server.set({ mode: 'redirect-same', redirectStatus: 302 });
    const error = await caught(answer(request({ method: 'POST', body: '{"n":1}' })));
    expect(error.message).toMatch(/only followed when the redirect keeps it \(307 or 308\)/);
    expect(server.received).toHaveLength(1);
  });

  it(`stops after ${MAX_REDIRECTS} redirects`, async () => {
    server.set({ mode: 'loop' });
    const error = await caught(answer(request()));
    expect(error.code).toBe('api_error');
    expect(error.message).toContain(`more than ${MAX_REDIRECTS} redirects`);
    expect(server.received).toHaveLength(MAX_REDIRECTS + 1);
  });

  it('refuses a Location that is not http(s) or that carries credentials', async () => {
    server.set({ mode: 'redirect', location: 'file:///etc/passwd' });
    expect((await caught(answer(request()))).message).toContain('not an http(s) URL');
    server.set({ mode: 'redirect', location: `http://user:${KEY}@127.0.0.1:1/` });
    const error = await caught(answer(request()));
    expect(error.message).toContain('carries credentials');
    expect(leakedRuns(errorTexts(error), KEY)).toEqual([]);
  });
});

describe('redaction at the boundary', () => {
  it('redacts a ZoteusError the client builds from the raw body, message and hint, with a clean stack', async () => {
    server.set({ mode: 'cut', status: 400, secret: KEY });
    const error = await caught(
      layer.send(request(), (a) => {
        // A careless client quoting the body whole, and the key's first half in a hint.
        throw new ZoteusError('api_error', `server said: ${a.text}`, { hint: `key ${KEY.slice(0, 12)}…` });
      }),
    );
    expect(error.message).toContain(REDACTED);
    expect(leakedRuns(errorTexts(error), KEY)).toEqual([]);
  });

  it('redacts log lines, including a redirect target that quotes a key', async () => {
    server.set({ mode: 'redirect', location: `${server.otherUrl}/go/${KEY.slice(3)}` });
    await answer(request());
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/things\?limit=1 302 \d+ms$/);
    for (const line of lines) expect(leakedRuns(line, KEY)).toEqual([]);
  });

  it('passes a caller’s abort reason through untouched', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(answer(request({ signal: controller.signal }))).rejects.toThrow('stop');
    expect(server.received).toHaveLength(0);
  });
});

describe('excerpt', () => {
  it('redacts before it cuts: a key straddling the 200th character leaves no 8-character run', () => {
    const redact = createRedactor([KEY]);
    for (let before = 170; before <= 200; before++) {
      const said = excerpt(`${'x'.repeat(before)}${KEY} and more text after it`, redact);
      expect(leakedRuns(said, KEY)).toEqual([]);
      expect(said.length).toBeLessThanOrEqual(201);
    }
  });

  it('flattens whitespace and keeps a short text whole', () => {
    expect(excerpt('  two\n\tlines  ', createRedactor())).toBe('two lines');
  });
});
