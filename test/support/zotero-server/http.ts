/**
 * Request context and answer helpers shared by the route modules. Handlers throw HttpError for
 * whole-request failures; the router turns it into a plain-text answer, as Zotero does.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { KeyRecord } from './state.js';
import type { RequestLogEntry } from './types.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string = STATUS_CODES[status] ?? 'Error',
    readonly headers: Record<string, string> = {},
  ) {
    super(`${status} ${body}`);
  }
}

export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** Server origin, e.g. `http://127.0.0.1:1234`: links in answers point back here. */
  base: string;
  path: string;
  params: URLSearchParams;
  headers: Record<string, string>;
  /** Parsed JSON, raw text when not JSON, undefined when empty. */
  body: unknown;
  rawBody: string;
  /** The API key of the request, once validated. */
  key?: KeyRecord;
  /** Added to whatever answer goes out (e.g. an injected `Backoff`). */
  extraHeaders: Record<string, string>;
  entry: RequestLogEntry;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function parseBody(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** Repeated parameters become arrays (Zotero ANDs repeated `tag`/`itemType`). */
export function queryRecord(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of params) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export function headerRecord(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** A non-negative integer header, or undefined when absent; malformed → 400. */
export function versionHeader(ctx: Ctx, name: string): number | undefined {
  const raw = ctx.headers[name.toLowerCase()];
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim())) throw new HttpError(400, `Invalid ${name} header`);
  return Number(raw);
}

/** A non-negative integer query parameter, or undefined when absent; malformed → 400. */
export function intParam(ctx: Ctx, name: string): number | undefined {
  const raw = ctx.params.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw.trim())) throw new HttpError(400, `Invalid value for '${name}' parameter`);
  return Number(raw);
}

/** Sends the answer: strings as text, anything else (but undefined) as JSON. */
export function send(ctx: Ctx, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const { res } = ctx;
  const all: Record<string, string> = { 'Zotero-API-Version': '3', ...ctx.extraHeaders, ...headers };
  let payload = '';
  if (typeof body === 'string') {
    payload = body;
    all['Content-Type'] ??= 'text/plain; charset=utf-8';
  } else if (body !== undefined) {
    payload = JSON.stringify(body, null, 4);
    all['Content-Type'] ??= 'application/json';
  }
  ctx.entry.status = status;
  ctx.entry.endedAt = Date.now();
  res.writeHead(status, all);
  res.end(payload);
}
