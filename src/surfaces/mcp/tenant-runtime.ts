/**
 * What one server process keeps for the tenants of a shared deployment, whichever way they
 * sign in (deployment.ts, auth/oidc-deployment.ts): each tenant's record with its key, read
 * from the state database and kept a minute (a missing one never, so a key saved through
 * another replica serves the next request); each tenant's services (a Zotero client with its
 * rate-limit state, caches), the least recently used closed past a bound; the shared state
 * each call of the tenant runs with; readiness; and closing it all.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createServiceRegistry } from '../../core/deps.js';
import { migrationStatus } from '../../core/store/migrations.js';
import { STATE_MIGRATIONS, type StateDatabase } from '../../core/store/state.js';
import type { Tenant, TenantStore } from '../../core/tenants/store.js';
import { sqlTenantFileStore } from '../../core/store/tenant-files.js';
import type { ServiceRegistry, SharedState } from '../../core/tool.js';
import type { FilesAccess } from './auth/files.js';

/** How long a tenant's decrypted key is kept in memory before the database is asked again. */
const TENANT_CACHE_MS = 60_000;
/** Tenants whose services (a Zotero client, caches) stay open at once; the least recent closes first. */
const MAX_OPEN_TENANTS = 200;

export interface TenantRuntime {
  /** This process's id, under which it holds its share of the Zotero keys' in-flight bounds. */
  readonly replica: string;
  tenantOf(id: string): Promise<Tenant | undefined>;
  servicesOf(id: string): ServiceRegistry;
  sharedStateOf(id: string): SharedState;
  /** The tenant's saved files, within `quota` bytes (`/account/files`, auth/files.ts). */
  filesAccess(quota: number): FilesAccess;
  /** The tenant's key changed: its record and services are dropped, the next call starts afresh. */
  forget(id: string): void;
  /** For `/readyz`: the database answers and has every migration. */
  ready(): Promise<{ ready: boolean; reason?: string }>;
  close(): Promise<void>;
}

export function tenantRuntime(
  state: StateDatabase,
  tenants: TenantStore,
  options: { now: () => number; upstreamMaxInFlight: number | undefined },
): TenantRuntime {
  const { now } = options;
  const replica = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const known = new Map<string, { tenant: Tenant; at: number }>();
  const open = new Map<string, ServiceRegistry>();
  return {
    replica,
    async tenantOf(id) {
      const cached = known.get(id);
      if (cached && now() - cached.at < TENANT_CACHE_MS) return cached.tenant;
      known.delete(id);
      const tenant = await tenants.get(id);
      if (tenant) {
        // Bounded like the services, and no key kept past its minute: the stale go first.
        for (const [other, entry] of known) {
          if (known.size < MAX_OPEN_TENANTS && now() - entry.at < TENANT_CACHE_MS) break;
          known.delete(other);
        }
        known.set(id, { tenant, at: now() });
      }
      return tenant;
    },
    servicesOf(id) {
      let services = open.get(id);
      if (services) {
        open.delete(id);
      } else {
        services = createServiceRegistry();
        if (open.size >= MAX_OPEN_TENANTS) {
          const [oldest, closing] = open.entries().next().value as [string, ServiceRegistry];
          open.delete(oldest);
          void closing.close();
        }
      }
      open.set(id, services);
      return services;
    },
    filesAccess: (quota) => ({
      storeOf: (id) => sqlTenantFileStore(state.db, `tenant:${id}`),
      quota,
    }),
    sharedStateOf: (id) => ({
      db: state.db,
      owner: `tenant:${id}`,
      replica,
      upstreamMaxInFlight: options.upstreamMaxInFlight,
    }),
    forget(id) {
      known.delete(id);
      const services = open.get(id);
      open.delete(id);
      void services?.close();
    },
    async ready() {
      try {
        const status = await migrationStatus(state.db, STATE_MIGRATIONS);
        return status.pending.length === 0
          ? { ready: true }
          : { ready: false, reason: `migrations pending: ${status.pending.join(', ')}` };
      } catch {
        return { ready: false, reason: 'the state database does not answer' };
      }
    },
    async close() {
      for (const services of open.values()) await services.close();
      open.clear();
      await state.db.close();
    },
  };
}
