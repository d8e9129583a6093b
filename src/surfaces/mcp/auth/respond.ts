/**
 * The answers of the authorization server's endpoints: JSON (never cached: tokens), OAuth
 * errors (RFC 6749 §5.2), redirects back to a client (RFC 9207's `iss` on every one), and the
 * few HTML pages a person sees in the browser (escaped, never framed).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BearerCheck } from './bearer.js';

/** Largest form or JSON body the endpoints read. */
export const AUTH_BODY_LIMIT = 64 * 1024;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const cached = headers['cache-control'] !== undefined;
  res.writeHead(status, {
    'content-type': 'application/json',
    ...(cached ? {} : { 'cache-control': 'no-store', pragma: 'no-cache' }),
    ...headers,
  });
  res.end(JSON.stringify(body));
}

export function sendOAuthError(
  res: ServerResponse,
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error, error_description: description }, headers);
}

/** A refused access token as an API answers it: `invalid_token` with the challenge that says why. */
export function sendBearerRefusal(
  res: ServerResponse,
  check: Extract<BearerCheck, { ok: false }>,
  headers: Record<string, string> = {},
): void {
  sendOAuthError(res, check.status, 'invalid_token', check.message, {
    ...headers,
    'www-authenticate': check.wwwAuthenticate,
  });
}

/** `target` with `params` added to its query (a redirect URI may carry a query of its own). */
export function withParams(target: string, params: Record<string, string | undefined>): string {
  const url = new URL(target);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  res.end();
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** A page for the person in the browser; `body` is HTML built from `html` below. */
export function sendPage(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    'referrer-policy': 'no-referrer',
  });
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
      '<meta name="viewport" content="width=device-width"><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:3em auto;padding:0 1em}a.button{display:inline-block;margin:.5em .5em 0 0;padding:.5em 1em;border:1px solid #555;border-radius:4px;text-decoration:none;color:inherit}</style>' +
      `</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`,
  );
}

/** Text for an HTML page: every argument escaped. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): string {
  return strings.reduce(
    (out, part, i) => out + part + (i < values.length ? escapeHtml(String(values[i])) : ''),
    '',
  );
}

/** The body as text, or undefined when it exceeds the limit (the rest is not read). */
export async function readText(req: IncomingMessage, limit = AUTH_BODY_LIMIT): Promise<string | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The media type of a request, without parameters, lower-case. */
export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}
