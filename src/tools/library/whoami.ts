import * as z from 'zod';
import { fitRows } from '../../core/items/read/bounds.js';
import { describeLibrary, libraryPrefix, resolveLibrary } from '../../core/library/address.js';
import { defineTool, type Deps } from '../../core/tool.js';
import { TOOLSETS, toolsetsOn, type ToolsetChoice } from '../../core/toolsets.js';

const backend = z.object({
  configured: z.boolean().describe('Whether this backend is set up to be used.'),
  available: z
    .boolean()
    .nullable()
    .describe('Whether it answered when checked; null when this call did not check it.'),
  detail: z.string().describe('What this backend is, or why it is not in use.'),
  error: z
    .object({ code: z.string(), message: z.string() })
    .optional()
    .describe('Why the check failed (for the Web API: the server refused the key, or could not be reached).'),
});

const localApiBackend = backend.extend({
  url: z.string().describe('Where the local API was looked for (ZOTEUS_LOCAL_API_URL).'),
  state: z
    .enum(['enabled', 'disabled', 'not_running', 'unsupported', 'error'])
    .optional()
    .describe(
      'enabled: it answers; disabled: Zotero runs with its local API off (see hint); not_running: nothing answers; unsupported: Zotero 6 or older.',
    ),
  hint: z.string().optional().describe('How to make it available.'),
});

const sqliteBackend = backend.extend({
  path: z.string().nullable().describe('The zotero.sqlite found, or the data directory looked in.'),
  schemaVersion: z
    .number()
    .int()
    .nullable()
    .describe('Its userdata schema version (Zotero 7: 123 … 10: 129).'),
  mode: z
    .enum(['direct', 'snapshot'])
    .nullable()
    .describe('direct: read in place; snapshot: a private copy, because Zotero holds the database.'),
});

const libraryRoute = z.object({
  library: z
    .string()
    .describe('users/<id> (users/0: the desktop’s own library, account unknown) or groups/<id>.'),
  name: z.string(),
  backend: z
    .enum(['web', 'localApi', 'sqlite'])
    .nullable()
    .describe('Which backend serves reads of this library now; null when none can (see reason).'),
  reason: z.string().describe('Why that backend (or why none).'),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  writes: z
    .object({
      to: z
        .enum(['desktop', 'cloud'])
        .nullable()
        .describe(
          'Where a write to this library goes now (ZOTEUS_WRITES); null when neither side can take it.',
        ),
      reason: z
        .string()
        .describe(
          'Why: the desktop app not running, its local API off, Zotero older than 10, no local API key (a person authorises Zoteus once), not on the desktop, or ZOTEUS_WRITES.',
        ),
    })
    .optional()
    .describe('Where writes to this library land, and why.'),
});

const flags = z.looseObject({
  library: z.boolean().optional(),
  files: z.boolean().optional(),
  notes: z.boolean().optional(),
  write: z.boolean().optional(),
});

const access = z
  .looseObject({
    user: flags.optional().describe('The key’s own user library; a missing flag means no access.'),
    groups: z
      .record(z.string(), flags)
      .optional()
      .describe('By group id, or "all" for every group the key’s user belongs to.'),
  })
  .describe('What the key may do, as the server’s /keys/current reports it.');

type LocalApiBackend = z.infer<typeof localApiBackend>;

/** The toolsets on and off, and how to turn the others on (toolsets.ts). */
function toolsetReport(
  choice: ToolsetChoice,
  byGrant: boolean,
): { on: string[]; off: string[]; hint?: string } {
  if (choice === 'all') return { on: ['all'], off: [] };
  const on = toolsetsOn(choice);
  const off = TOOLSETS.filter((set) => !on.includes(set));
  const example = off[0] ?? 'files';
  return {
    on,
    off,
    hint: byGrant
      ? `Your sign-in chose these toolsets: sign in again with a scope zotero:toolset:<name> for each you want (e.g. zotero:toolset:${example}), or zotero:toolset:all.`
      : `Start the MCP server with ZOTEUS_TOOLSETS set to a comma-separated list (e.g. ${[...on, example].join(',')}), or all for every tool.`,
  };
}
type SqliteBackend = z.infer<typeof sqliteBackend>;

/** Each library with where its writes go (write-route.ts), probing the desktop without a key. */
async function withWrites(
  deps: Deps,
  libraries: Array<z.infer<typeof libraryRoute>>,
): Promise<Array<z.infer<typeof libraryRoute>>> {
  const { planWrites } = await import('../../core/library/write-route.js');
  const { toZoteusError } = await import('../../core/errors.js');
  const defaultRef = resolveLibrary({}, deps.config);
  const out: Array<z.infer<typeof libraryRoute>> = [];
  for (const [i, entry] of libraries.entries()) {
    const group = /^groups\/(\d+)$/.exec(entry.library);
    const ref =
      i === 0 || !group
        ? defaultRef
        : { type: 'group' as const, id: Number(group[1]), source: 'argument' as const };
    try {
      const plan = await planWrites(deps, ref, { probe: true });
      out.push({ ...entry, writes: { to: plan.side, reason: plan.error?.message ?? plan.reason } });
    } catch (caught) {
      out.push({ ...entry, writes: { to: null, reason: toZoteusError(caught).message } });
    }
  }
  return out;
}

/** The desktop backends and the routes, as the router sees them now; a failure is reported, never thrown. */
async function desktopReport(
  deps: Deps,
  dataDir: string,
): Promise<{
  localApi: LocalApiBackend;
  sqlite: SqliteBackend;
  libraries: Array<z.infer<typeof libraryRoute>>;
}> {
  const { describeBackends } = await import('../../core/library/router.js');
  const { toZoteusError } = await import('../../core/errors.js');
  try {
    const report = await describeBackends(deps);
    const { error: sqliteError, ...sqlite } = report.sqlite;
    return {
      localApi: report.localApi,
      sqlite: { ...sqlite, ...(sqliteError ? { error: sqliteError } : {}) },
      libraries: await withWrites(deps, report.libraries),
    };
  } catch (caught) {
    const error = toZoteusError(caught);
    const failed = { code: error.code, message: error.message };
    return {
      localApi: { configured: true, available: false, url: '', detail: error.message, error: failed },
      sqlite: {
        configured: true,
        available: false,
        path: dataDir,
        schemaVersion: null,
        mode: null,
        detail: error.message,
        error: failed,
      },
      libraries: [],
    };
  }
}

export default defineTool({
  name: 'zotero_whoami',
  title: 'Zoteus status',
  summary: 'Show the Zoteus version, the default library, read-only mode and which backends are set up.',
  description: [
    'Report the setup: read-only mode, the default library and why, each backend and if it answers (Web API',
    "with ZOTERO_API_KEY; the desktop's local API and zotero.sqlite, no key), per library where reads and writes go,",
    'key access, toolsets on. Call it on auth_missing or permission_denied; groups and rights: zotero_groups.',
  ].join(' '),
  startHere: 'to see the default library and which backends are set up',
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'library',
  inDefaultSet: true,
  cli: [{ path: ['whoami'] }],
  input: z.object({}).strict(),
  output: z.object({
    version: z.string().describe('Zoteus version.'),
    readOnly: z.boolean().describe('True when only read tools are exposed (ZOTEUS_READ_ONLY).'),
    library: z
      .object({
        type: z.enum(['user', 'group']),
        id: z
          .number()
          .nullable()
          .describe(
            'Library id; null when it would come from a key that could not be checked, or from a desktop app signed in to no Zotero account.',
          ),
        source: z.enum(['argument', 'config', 'key', 'desktop']),
        description: z.string(),
      })
      .describe('The default library: what a call without library_id addresses.'),
    key: z
      .object({
        userID: z.number().int().describe('The user the key belongs to: its user library is users/<userID>.'),
        username: z.string(),
        displayName: z.string().optional(),
        access,
      })
      .nullable()
      .describe(
        'Who the API key belongs to and what it may do; null without a key or when the check failed.',
      ),
    backends: z.object({ web: backend, localApi: localApiBackend, sqlite: sqliteBackend }),
    libraries: z
      .array(libraryRoute)
      .describe(
        'The default library, then each library the desktop app holds: which backend serves its reads, and why.',
      ),
    librariesTotal: z
      .number()
      .int()
      .optional()
      .describe(
        'How many libraries there are, when libraries holds only the first (the answer’s size bound, about 40 KB).',
      ),
    profile: z.string().nullable().describe('The config-file profile in use, if any.'),
    toolsets: z
      .object({
        on: z
          .array(z.string())
          .describe('The toolsets an MCP server with this configuration lists (ZOTEUS_TOOLSETS).'),
        off: z.array(z.string()).describe('The toolsets it leaves out.'),
        hint: z.string().optional().describe('How to offer the others.'),
      })
      .describe('Which groups of tools an MCP server lists; the CLI has every command whatever they are.'),
  }),
  summarize: (out) => {
    const web = out.backends.web;
    const status = !web.configured
      ? 'not configured'
      : out.key
        ? `key of ${out.key.username || `user ${out.key.userID}`}`
        : web.error
          ? web.error.code
          : 'not checked';
    const desktop = out.backends.localApi.available
      ? 'local API'
      : out.backends.sqlite.available
        ? 'zotero.sqlite'
        : out.backends.localApi.configured
          ? 'not found'
          : 'off';
    const writes = out.libraries[0]?.writes;
    return `Zoteus ${out.version}; default library: ${out.library.description}; web API: ${status}; desktop: ${desktop}${
      writes?.to
        ? `; writes go to the ${writes.to === 'desktop' ? 'desktop app' : 'cloud'}`
        : writes
          ? '; writes cannot go anywhere yet (writes.reason says why)'
          : ''
    }${
      out.readOnly ? '; read-only mode' : ''
    }${out.librariesTotal !== undefined ? `; ${out.libraries.length} of ${out.librariesTotal} libraries listed` : ''}.`;
  },
  async run(_input, deps) {
    const { config } = deps;
    const library = resolveLibrary({}, config);
    const base = `Zotero Web API at ${config.apiUrl}`;
    const web: z.infer<typeof backend> = {
      configured: config.apiKey !== undefined,
      available: null,
      detail: `${base}; no API key (set ZOTERO_API_KEY for cloud reads and writes).`,
    };
    let key: {
      userID: number;
      username: string;
      displayName?: string;
      access: z.infer<typeof access>;
    } | null = null;

    if (config.apiKey !== undefined) {
      // whoami diagnoses: it asks the server now (and refreshes the key caches) and reports a
      // failure in its output instead of failing.
      const { checkKey } = await import('../../core/library/keys.js');
      const { isZoteusError, toZoteusError } = await import('../../core/errors.js');
      try {
        const { info } = await checkKey(deps, { fresh: true });
        key = {
          userID: info.userID,
          username: info.username,
          ...(info.displayName ? { displayName: info.displayName } : {}),
          // A copy: the output must not share the cached access object.
          access: structuredClone({ ...info.access }),
        };
        if (library.id === null) library.id = info.userID;
        web.available = true;
        web.detail = `${base}; the API key is valid (user ${info.userID}${info.username ? `, ${info.username}` : ''}).`;
      } catch (caught) {
        const error = toZoteusError(caught);
        const refused =
          isZoteusError(caught) && (error.code === 'auth_invalid' || error.code === 'auth_expired');
        // Available means the server answered as a Zotero API: it refused the key, or throttles.
        web.available = refused || error.code === 'rate_limited';
        web.error = { code: error.code, message: error.message };
        web.detail = refused
          ? `${base} answered, but refused the API key: check ZOTERO_API_KEY or create a key at https://www.zotero.org/settings/keys.`
          : `${base}: the API key could not be checked (${error.code}). ${error.message}`;
      }
    }

    const { localApi, sqlite, libraries } = await desktopReport(deps, config.zoteroDataDir);
    // The desktop's personal library: its id is the account the desktop is signed in to, which
    // the route of the default library (listed first) names as users/<id> (users/0: none).
    const desktopId = /^users\/([1-9]\d*)$/.exec(libraries[0]?.library ?? '')?.[1];
    if (library.id === null && library.source === 'desktop' && desktopId !== undefined)
      library.id = Number(desktopId);
    const description =
      library.id !== null && library.source === 'key'
        ? `${libraryPrefix({ type: library.type, id: library.id })} (the API key's user library)`
        : library.id !== null && library.source === 'desktop'
          ? `${libraryPrefix({ type: library.type, id: library.id })} (the desktop app's personal library)`
          : describeLibrary(library);
    // A desktop synced with hundreds of groups: the first libraries, counted all.
    const shown = fitRows(libraries);
    return {
      version: deps.version,
      readOnly: config.readOnly || (config.readOnlyGrant ?? false),
      library: { ...library, description },
      key,
      backends: { web, localApi, sqlite },
      libraries: shown.rows,
      ...(shown.cut ? { librariesTotal: libraries.length } : {}),
      profile: config.profile ?? null,
      toolsets: toolsetReport(config.toolsets ?? 'default', config.toolsetsGrant === true),
    };
  },
});
