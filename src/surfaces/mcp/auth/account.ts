/**
 * A person's account on a deployment with an external OpenID provider (oidc.ts): their Zotero
 * key, supplied once and kept encrypted with their tenant (core/tenants/store.ts).
 *   GET    /account             whether a key is stored, whose (never the key)
 *   POST   /account/zotero-key  `{ "key": "…" }` (JSON) or a form; checked with Zotero's
 *                               `GET /keys/current` (a key Zotero refuses is a 400), stored
 *                               with the user id and name Zotero answers
 *   DELETE /account/zotero-key  forgets it
 *   GET    /account/settings    a small page whose form posts to /account/zotero-key
 * Every call carries the person's access token: in `Authorization: Bearer`, or (the page's
 * form) in the form's `access_token` field (RFC 6750 §2.2). Never a cookie, so another site
 * cannot make a browser call these on someone's behalf. A token acts on its own tenant only:
 * nothing in a request names a tenant.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ZoteusError } from '../../../core/errors.js';
import type { TenantStore } from '../../../core/tenants/store.js';
import type { BearerCheck } from './bearer.js';
import {
  html,
  mediaType,
  readText,
  sendBearerRefusal,
  sendJson,
  sendOAuthError,
  sendPage,
} from './respond.js';

export const ACCOUNT_PATH = '/account';
export const ZOTERO_KEY_PATH = '/account/zotero-key';
export const SETTINGS_PATH = '/account/settings';

/** A Zotero API key: 24 letters and digits. */
const KEY_PATTERN = /^[A-Za-z0-9]{24}$/;

export interface KeyOwner {
  userId: number;
  username: string;
}

export interface AccountOptions {
  tenants: Pick<TenantStore, 'get' | 'put' | 'remove'>;
  /** Who the key belongs to, from Zotero's `GET /keys/current`; throws `auth_invalid` for a key Zotero refuses. */
  checkKey(key: string): Promise<KeyOwner>;
  /** A tenant's key was stored or forgotten: drop what is kept of it in memory. */
  onChange?(tenantId: string): void;
}

interface Context {
  authenticate(req: IncomingMessage, formToken?: string): Promise<BearerCheck>;
  log(line: string): void;
  corsHeaders: Record<string, string>;
}

type Body =
  | { kind: 'json' | 'form'; fields: Record<string, unknown> }
  | { kind: 'none' }
  | { kind: 'bad'; why: string };

async function readBody(req: IncomingMessage): Promise<Body> {
  const type = mediaType(req);
  const text = await readText(req);
  if (text === undefined) return { kind: 'bad', why: 'The request body is too large.' };
  if (type === 'application/json') {
    try {
      const value = JSON.parse(text) as unknown;
      if (value !== null && typeof value === 'object' && !Array.isArray(value))
        return { kind: 'json', fields: value as Record<string, unknown> };
    } catch {
      // below
    }
    return { kind: 'bad', why: 'The request body is not a JSON object.' };
  }
  if (type === 'application/x-www-form-urlencoded') {
    return { kind: 'form', fields: Object.fromEntries(new URLSearchParams(text)) };
  }
  if (text === '') return { kind: 'none' };
  return { kind: 'bad', why: 'Send JSON ({"key": "…"}) or a form (key=…).' };
}

export function accountRoutes(options: AccountOptions, context: Context) {
  const cors = context.corsHeaders;

  const status = async (tenantId: string) => {
    const tenant = await options.tenants.get(tenantId);
    return tenant
      ? {
          zotero_key_stored: true,
          zotero_user_id: tenant.userId ?? null,
          zotero_username: tenant.username,
          updated_at: new Date(tenant.updatedAt).toISOString(),
        }
      : { zotero_key_stored: false };
  };

  /** A refusal: JSON for the API, a page for the settings form. */
  const refuse = (res: ServerResponse, form: boolean, code: number, error: string, description: string) =>
    form
      ? sendPage(
          res,
          code,
          'Your Zotero key was not saved',
          html`<p>${description}</p>
            ${backLink}`,
        )
      : sendOAuthError(res, code, error, description, cors);

  const storeKey = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const form = body.kind === 'form';
    const formToken =
      form && typeof body.fields.access_token === 'string' ? body.fields.access_token : undefined;
    const check = await context.authenticate(req, formToken);
    if (!check.ok) return unauthorized(res, check, form);
    if (body.kind === 'bad') return refuse(res, form, 400, 'invalid_request', body.why);
    const key = body.kind === 'none' ? undefined : body.fields.key;
    if (typeof key !== 'string' || key.trim() === '') {
      return refuse(res, form, 400, 'invalid_request', 'Give your Zotero API key as "key".');
    }
    if (!KEY_PATTERN.test(key.trim())) {
      return refuse(
        res,
        form,
        400,
        'invalid_key',
        'That is not a Zotero API key (24 letters and digits); create one at https://www.zotero.org/settings/keys.',
      );
    }
    const apiKey = key.trim();
    let owner: KeyOwner;
    try {
      owner = await options.checkKey(apiKey);
    } catch (error) {
      const zerr = error instanceof ZoteusError ? error : undefined;
      if (zerr?.code === 'auth_invalid') {
        return refuse(
          res,
          form,
          400,
          'invalid_key',
          'Zotero does not accept this key (GET /keys/current refused it): it may be mistyped or revoked. Check it at https://www.zotero.org/settings/keys.',
        );
      }
      context.log(`zoteus: account: checking a Zotero key failed: ${zerr?.code ?? 'error'}`);
      return refuse(
        res,
        form,
        502,
        'temporarily_unavailable',
        'Zotero could not be asked about this key now; nothing was stored. Try again in a moment.',
      );
    }
    const { tenantId } = check.principal;
    await options.tenants.put({ id: tenantId, username: owner.username, apiKey, userId: owner.userId });
    options.onChange?.(tenantId);
    context.log(`zoteus: account: ${tenantId} stored a Zotero key of user ${owner.userId}`);
    if (form) {
      return sendPage(
        res,
        200,
        'Your Zotero key is saved',
        html`<p>
            Your MCP client now reaches the library of Zotero user ${owner.username} (${owner.userId}).
          </p>
          ${backLink}`,
      );
    }
    sendJson(res, 200, await status(tenantId), cors);
  };

  const unauthorized = (res: ServerResponse, check: Extract<BearerCheck, { ok: false }>, form: boolean) => {
    if (form) {
      return sendPage(
        res,
        check.status,
        'Your Zotero key was not saved',
        html`<p>${check.message}</p>
          <p>Paste a current access token from your OpenID provider.</p>
          ${backLink}`,
      );
    }
    sendBearerRefusal(res, check, cors);
  };

  const routes: Record<
    string,
    Partial<Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>>
  > = {
    [ACCOUNT_PATH]: {
      GET: async (req, res) => {
        const check = await context.authenticate(req);
        if (!check.ok) return unauthorized(res, check, false);
        sendJson(res, 200, await status(check.principal.tenantId), cors);
      },
    },
    [ZOTERO_KEY_PATH]: {
      POST: storeKey,
      DELETE: async (req, res) => {
        const check = await context.authenticate(req);
        if (!check.ok) return unauthorized(res, check, false);
        const { tenantId } = check.principal;
        const removed = await options.tenants.remove(tenantId);
        options.onChange?.(tenantId);
        if (removed) context.log(`zoteus: account: ${tenantId} removed its Zotero key`);
        sendJson(res, 200, { zotero_key_stored: false, removed }, cors);
      },
    },
    [SETTINGS_PATH]: {
      GET: async (_req, res) => sendPage(res, 200, 'Your Zotero key', settingsForm),
    },
  };

  return {
    async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
      const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
      if (!route) return false;
      const methods = Object.keys(route);
      if (req.method === 'OPTIONS' && path !== SETTINGS_PATH) {
        res.writeHead(204, cors);
        res.end();
        return true;
      }
      const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
      const run = route[method];
      if (!run) {
        sendOAuthError(res, 405, 'invalid_request', `Use ${methods.join(' or ')} for ${path}.`, {
          allow: methods.join(', '),
          ...cors,
        });
        return true;
      }
      await run(req, res);
      return true;
    },
  };
}

const backLink = html`<p><a href="${SETTINGS_PATH}">Back to the settings</a></p>`;

const settingsForm =
  html`<p>
    This server reaches your Zotero library with your own Zotero API key. Create one at
    <a href="https://www.zotero.org/settings/keys">zotero.org/settings/keys</a> (with access to your library;
    allow write access for changes), then save it here once.
  </p>` +
  html`<form method="post" action="${ZOTERO_KEY_PATH}"></form>` +
  html`<p>
    <label
      >Access token from your OpenID provider<br /><input
        type="password"
        name="access_token"
        required
        autocomplete="off"
        size="40"
    /></label>
  </p>` +
  html`<p>
    <label
      >Zotero API key<br /><input
        type="password"
        name="key"
        required
        autocomplete="off"
        size="30"
        pattern="[A-Za-z0-9]{24}"
    /></label>
  </p>` +
  html`<p><button type="submit">Save the key</button></p></form>` +
  html`<p>
    Scripts and tools can do the same: <code>POST ${ZOTERO_KEY_PATH}</code> with
    <code>Authorization: Bearer …</code> and <code>{"key": "…"}</code>; <code>GET ${ACCOUNT_PATH}</code> tells
    whether a key is stored, <code>DELETE ${ZOTERO_KEY_PATH}</code> forgets it.
  </p>`;
