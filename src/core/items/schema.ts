/**
 * Zotero's item schema (`schema.json`, as the Web API serves it at `GET /schema`): item types,
 * their fields with base-field mappings, creator types, and the CSL mappings the importers use.
 *
 * Three copies, newest version wins:
 * - the bundled copy, `data/zotero-schema.json` (same path from `src/` and from `dist/`);
 * - a copy fetched from the configured server's `/schema`, cached on disk under
 *   `$cacheDir/zotero-schema/<sha256(apiUrl)>.json` with its ETag, revalidated with
 *   `If-None-Match` at most once per {@link SCHEMA_TTL_MS} (a failed fetch is not retried for
 *   {@link SCHEMA_RETRY_MS}), so a refresh costs one request a day, usually a `304`;
 * - in memory per `deps` (one MCP server, one CLI invocation).
 *
 * Offline callers (`plan()`, input validation before any request) use {@link localSchema}: the
 * bundled copy or the disk copy, never the network.
 */
import { randomHex, sha256 } from '../node-crypto.js';
// fs.promises, not node:fs/promises: it loads on first use, not with this module.
import { readFileSync, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { packageRoot } from '../package-root.js';
import type { Deps } from '../tool.js';
import type { CallContext, ZoteroClient } from '../zotero/index.js';
import { ensureDir } from '../dirs.js';

/** How long a fetched (or revalidated) schema is trusted before asking `/schema` again. */
export const SCHEMA_TTL_MS = 24 * 60 * 60_000;
/** After a failed fetch (offline, or a server without `/schema`), wait this long before trying again. */
export const SCHEMA_RETRY_MS = 60 * 60_000;

/** The bundled copy: `data/zotero-schema.json` in the package folder. */
export const BUNDLED_SCHEMA_PATH = join(packageRoot(), 'data', 'zotero-schema.json');

/** `schema.json` as published (only the parts Zoteus reads). */
export interface SchemaJson {
  version: number;
  itemTypes: Array<{
    itemType: string;
    fields: Array<{ field: string; baseField?: string }>;
    creatorTypes: Array<{ creatorType: string; primary?: boolean }>;
  }>;
  /** Field metadata (`{ date: { type: 'date' } }`). */
  meta?: { fields?: Record<string, { type?: string }> };
  csl?: {
    types?: Record<string, string[]>;
    fields?: { text?: Record<string, string[]>; date?: Record<string, string> };
    names?: Record<string, string>;
  };
}

export interface ItemTypeSpec {
  itemType: string;
  /** Field name → its base field (undefined when the field is a base field itself). */
  fields: Map<string, string | undefined>;
  /** Base field → this type's field mapped onto it (`publicationTitle` → `bookTitle`). */
  byBase: Map<string, string>;
  creatorTypes: string[];
  primaryCreatorType: string | undefined;
}

export interface ItemSchema {
  version: number;
  /** Where this copy came from. */
  source: 'bundled' | 'cache' | 'server';
  types: Map<string, ItemTypeSpec>;
  /** Every field name of every type, base names included. */
  allFields: Set<string>;
  csl: {
    /** CSL type → Zotero item types (first is the usual one). */
    types: Record<string, string[]>;
    /** CSL text variable → Zotero base fields. */
    text: Record<string, string[]>;
    /** CSL date variable → Zotero base field. */
    date: Record<string, string>;
    /** Zotero creator type → CSL name variable. */
    names: Record<string, string>;
  };
}

/** Whether a parsed value looks like `schema.json` (item types with fields and creator types). */
export function isSchemaJson(value: unknown): value is SchemaJson {
  const v = value as Partial<SchemaJson> | null;
  return (
    v !== null &&
    typeof v === 'object' &&
    typeof v.version === 'number' &&
    Array.isArray(v.itemTypes) &&
    v.itemTypes.length > 0 &&
    v.itemTypes.every(
      (t) =>
        t !== null &&
        typeof t === 'object' &&
        typeof t.itemType === 'string' &&
        Array.isArray(t.fields) &&
        Array.isArray(t.creatorTypes),
    )
  );
}

export function buildSchema(json: SchemaJson, source: ItemSchema['source']): ItemSchema {
  const types = new Map<string, ItemTypeSpec>();
  const allFields = new Set<string>();
  for (const t of json.itemTypes) {
    const fields = new Map<string, string | undefined>();
    const byBase = new Map<string, string>();
    for (const f of t.fields) {
      fields.set(f.field, f.baseField);
      allFields.add(f.field);
      if (f.baseField) {
        byBase.set(f.baseField, f.field);
        allFields.add(f.baseField);
      }
    }
    const creatorTypes = t.creatorTypes.map((c) => c.creatorType);
    types.set(t.itemType, {
      itemType: t.itemType,
      fields,
      byBase,
      creatorTypes,
      primaryCreatorType: t.creatorTypes.find((c) => c.primary)?.creatorType ?? creatorTypes[0],
    });
  }
  return {
    version: json.version,
    source,
    types,
    allFields,
    csl: {
      types: json.csl?.types ?? {},
      text: json.csl?.fields?.text ?? {},
      date: json.csl?.fields?.date ?? {},
      names: json.csl?.names ?? {},
    },
  };
}

/**
 * The field of `itemType` a name stands for: the name itself when the type has it, else the
 * type's field mapped onto that base field (`title` → `caseName` for a case). Undefined when
 * the type has no such field.
 */
export function fieldFor(schema: ItemSchema, itemType: string, name: string): string | undefined {
  const spec = schema.types.get(itemType);
  if (!spec) return undefined;
  if (spec.fields.has(name)) return name;
  return spec.byBase.get(name);
}

export function readBundledSchema(path: string = BUNDLED_SCHEMA_PATH): SchemaJson {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  if (!isSchemaJson(parsed)) throw new Error(`${path} is not a Zotero schema.json`);
  return parsed;
}

/** The disk cache of one server's `/schema`. */
interface SchemaCacheFile {
  apiUrl: string;
  /** When the server last answered 200 or 304. */
  checkedAt?: number;
  /** When a fetch last failed (no retry for SCHEMA_RETRY_MS). */
  failedAt?: number;
  etag?: string;
  schema?: SchemaJson;
}

export function schemaCachePath(config: Pick<Config, 'cacheDir' | 'apiUrl'>): string {
  const digest = sha256().update(config.apiUrl).digest('hex').slice(0, 32);
  return join(config.cacheDir, 'zotero-schema', `${digest}.json`);
}

function readCacheFile(config: Pick<Config, 'cacheDir' | 'apiUrl'>): SchemaCacheFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(schemaCachePath(config), 'utf8')) as SchemaCacheFile;
    if (parsed === null || typeof parsed !== 'object' || parsed.apiUrl !== config.apiUrl) return undefined;
    if (parsed.schema !== undefined && !isSchemaJson(parsed.schema)) delete parsed.schema;
    return parsed;
  } catch {
    return undefined;
  }
}

async function writeCacheFile(
  config: Pick<Config, 'cacheDir' | 'apiUrl'>,
  file: SchemaCacheFile,
  log: (line: string) => void,
): Promise<void> {
  const path = schemaCachePath(config);
  const tmp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  try {
    ensureDir(join(config.cacheDir, 'zotero-schema'));
    await fsp.writeFile(tmp, JSON.stringify(file), { mode: 0o600 });
    await fsp.rename(tmp, path);
  } catch (error) {
    await fsp.rm(tmp, { force: true }).catch(() => {});
    log(`Could not write the schema cache: ${(error as Error).message}`);
  }
}

/** The newer of the bundled copy and a cached server copy. */
function newest(bundled: SchemaJson, cached: SchemaJson | undefined): ItemSchema {
  return cached && cached.version > bundled.version
    ? buildSchema(cached, 'cache')
    : buildSchema(bundled, 'bundled');
}

/**
 * The schema without any network: the bundled copy, or the server's copy cached on disk when
 * it is newer. What `plan()` and pre-request validation use.
 */
export function localSchema(config: Pick<Config, 'cacheDir' | 'apiUrl'>): ItemSchema {
  return newest(readBundledSchema(), readCacheFile(config)?.schema);
}

const SCHEMA_SERVICE = 'zotero-item-schema';

interface SchemaState {
  schema?: ItemSchema;
  /** When the in-memory copy was last settled (fresh from cache, server, or a failure). */
  settledAt?: number;
  pending?: Promise<ItemSchema>;
}

/**
 * The schema for a call that is online: the in-memory copy when settled within the TTL; else
 * the disk copy when it was checked within the TTL (or failed within the retry window); else
 * one `GET /schema` with `If-None-Match`, whose `200` replaces the cached copy and whose `304`
 * or failure keeps the local one. Never throws for the refresh: a failed fetch falls back.
 */
export async function onlineSchema(
  deps: Pick<Deps, 'config' | 'clock' | 'log' | 'services'>,
  client: ZoteroClient,
  call?: CallContext,
): Promise<ItemSchema> {
  const state = await deps.services.get<SchemaState>(SCHEMA_SERVICE, () => ({}));
  const now = deps.clock.now();
  if (state.schema && state.settledAt !== undefined && now - state.settledAt < SCHEMA_TTL_MS) {
    return state.schema;
  }
  if (state.pending) return state.pending;
  const pending = (async (): Promise<ItemSchema> => {
    const bundled = readBundledSchema();
    const file = readCacheFile(deps.config) ?? { apiUrl: deps.config.apiUrl };
    const fresh =
      (file.checkedAt !== undefined && now - file.checkedAt < SCHEMA_TTL_MS && now >= file.checkedAt) ||
      (file.failedAt !== undefined && now - file.failedAt < SCHEMA_RETRY_MS && now >= file.failedAt);
    if (fresh) return newest(bundled, file.schema);

    try {
      // A cached copy older than the bundled one is not worth revalidating: ask for the full one.
      const useEtag =
        file.etag !== undefined && file.schema !== undefined && file.schema.version >= bundled.version;
      const response = await client.request<unknown>('GET', '/schema', {
        headers: useEtag ? { 'If-None-Match': file.etag as string } : {},
        call,
      });
      if (response.status === 304 && file.schema) {
        await writeCacheFile(deps.config, { ...file, checkedAt: now, failedAt: undefined }, (line) =>
          deps.log.debug(line),
        );
        return newest(bundled, file.schema);
      }
      if (!isSchemaJson(response.data)) {
        throw new Error(`GET /schema answered ${response.status} without a schema.json body`);
      }
      const etag = response.headers.get('etag') ?? undefined;
      await writeCacheFile(
        deps.config,
        { apiUrl: deps.config.apiUrl, checkedAt: now, ...(etag ? { etag } : {}), schema: response.data },
        (line) => deps.log.debug(line),
      );
      return response.data.version >= bundled.version
        ? buildSchema(response.data, 'server')
        : buildSchema(bundled, 'bundled');
    } catch (error) {
      deps.log.debug(`Schema refresh from /schema failed, using the local copy: ${(error as Error).message}`);
      await writeCacheFile(deps.config, { ...file, failedAt: now }, (line) => deps.log.debug(line));
      return newest(bundled, file.schema);
    }
  })();
  state.pending = pending;
  try {
    const schema = await pending;
    state.schema = schema;
    state.settledAt = now;
    return schema;
  } finally {
    delete state.pending;
  }
}
