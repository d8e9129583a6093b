/**
 * A person's saved files on a shared deployment, managed over HTTP beside their sign-in (reading
 * one is the MCP resource `zotero://files/<path>`; deleting one is not a tool, so the tool list
 * every session pays for stays as it is):
 *   GET    /account/files         the files saved (path, size, type, time, resource URI, at most
 *                                 1,000 by path), the bytes used and the quota
 *   DELETE /account/files/<path>  deletes one, its path as the list gives it (URL-encoded)
 * Every call carries the person's access token (`Authorization: Bearer`): a token reaches its
 * own tenant's files only, and nothing in a request names a tenant.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TenantFileStore } from '../../../core/store/tenant-files.js';
import { savedFileUri } from '../../../render/save.js';
import type { BearerCheck } from './bearer.js';
import { sendBearerRefusal, sendJson, sendOAuthError } from './respond.js';

export const FILES_PATH = '/account/files';

/** Files listed at most in one answer (the answer says how many there are). */
const LISTED = 1000;

export interface FilesAccess {
  /** The tenant's saved files. */
  storeOf(tenantId: string): Pick<TenantFileStore, 'list' | 'delete' | 'used'>;
  /** Bytes a tenant may keep (ZOTEUS_TENANT_QUOTA_MB). */
  quota: number;
}

export function filesRoutes(
  access: FilesAccess,
  context: {
    authenticate(req: IncomingMessage): Promise<BearerCheck>;
    corsHeaders: Record<string, string>;
  },
) {
  const cors = { ...context.corsHeaders, 'access-control-allow-methods': 'GET, DELETE, OPTIONS' };

  return {
    /** Answers the request when its path is one of the files routes; false otherwise. */
    async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
      const one = path.startsWith(`${FILES_PATH}/`);
      if (path !== FILES_PATH && !one) return false;
      if (req.method === 'OPTIONS') {
        res.writeHead(204, cors);
        res.end();
        return true;
      }
      const allowed = one ? 'DELETE' : 'GET';
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      if (method !== allowed) {
        sendOAuthError(
          res,
          405,
          'invalid_request',
          `Use ${allowed} for ${one ? `${FILES_PATH}/<path>` : path}.`,
          {
            allow: one ? 'DELETE' : 'GET, HEAD',
            ...cors,
          },
        );
        return true;
      }
      const check = await context.authenticate(req);
      if (!check.ok) {
        sendBearerRefusal(res, check, cors);
        return true;
      }
      const store = access.storeOf(check.principal.tenantId);
      if (!one) {
        const { files, total } = await store.list(LISTED);
        sendJson(
          res,
          200,
          {
            used: await store.used(),
            quota: access.quota,
            total,
            ...(total > files.length ? { truncated: true } : {}),
            files: files.map((f) => ({
              path: f.path,
              size: f.size,
              content_type: f.contentType ?? null,
              updated_at: new Date(f.updatedAt).toISOString(),
              uri: savedFileUri(f.path),
            })),
          },
          cors,
        );
        return true;
      }
      let name: string;
      try {
        name = path
          .slice(FILES_PATH.length + 1)
          .split('/')
          .map((part) => decodeURIComponent(part))
          .join('/');
      } catch {
        sendOAuthError(res, 400, 'invalid_request', 'The path is not URL-encoded text.', cors);
        return true;
      }
      if (!(await store.delete(name))) {
        sendOAuthError(res, 404, 'not_found', `You have no saved file ${name}.`, cors);
        return true;
      }
      sendJson(res, 200, { deleted: name, used: await store.used(), quota: access.quota }, cors);
      return true;
    },
  };
}
