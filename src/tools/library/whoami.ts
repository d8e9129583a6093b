import { z } from 'zod';
import { describeLibrary, resolveLibrary } from '../../core/library/address.js';
import { defineTool } from '../../core/tool.js';

const backend = z.object({
  configured: z.boolean().describe('Whether this backend is set up to be used.'),
  available: z
    .boolean()
    .nullable()
    .describe('Whether it answered when checked; null when this call did not check it.'),
  detail: z.string().describe('What this backend is, or why it is not in use.'),
});

export default defineTool({
  name: 'zotero_whoami',
  title: 'Who am I (Zoteus status)',
  summary: 'Show the Zoteus version, the default library, read-only mode and which backends are set up.',
  description: [
    'Read-only; changes nothing. Reports the Zoteus version, whether read-only mode is on (then only read tools exist),',
    'the default library calls go to when they name none (and why: configured, the API key’s own library, or the desktop app),',
    'and which backends are configured: the Zotero Web API (cloud; needs ZOTERO_API_KEY), the desktop app’s local API,',
    'and its zotero.sqlite. Call it first when a library call fails with auth_missing or permission_denied, or to learn',
    'which library an omitted library_id means. The API key itself is never shown.',
  ].join(' '),
  tier: 'read',
  openWorld: false,
  since: '0.1.0',
  cli: [{ path: ['whoami'] }],
  input: z.object({}).strict(),
  output: z.object({
    version: z.string().describe('Zoteus version.'),
    readOnly: z.boolean().describe('True when only read tools are exposed (ZOTEUS_READ_ONLY).'),
    library: z
      .object({
        type: z.enum(['user', 'group']),
        id: z.number().nullable().describe('Library id; null when it comes from the key or the desktop app.'),
        source: z.enum(['argument', 'config', 'key', 'desktop']),
        description: z.string(),
      })
      .describe('The default library: what a call without library_id addresses.'),
    backends: z.object({ web: backend, localApi: backend, sqlite: backend }),
    profile: z.string().nullable().describe('The config-file profile in use, if any.'),
  }),
  summarize: (out) =>
    `Zoteus ${out.version}; default library: ${out.library.description}; web API ${
      out.backends.web.configured ? 'configured' : 'not configured'
    }${out.readOnly ? '; read-only mode' : ''}.`,
  async run(_input, deps) {
    const { config } = deps;
    const library = resolveLibrary({}, config);
    return {
      version: deps.version,
      readOnly: config.readOnly,
      library: { ...library, description: describeLibrary(library) },
      backends: {
        web: {
          configured: config.apiKey !== undefined,
          available: null,
          detail:
            config.apiKey !== undefined
              ? `Zotero Web API at ${config.apiUrl} with an API key.`
              : `Zotero Web API at ${config.apiUrl}; no API key (set ZOTERO_API_KEY for cloud reads and writes).`,
        },
        localApi: {
          configured: false,
          available: null,
          detail: 'The desktop local API backend is not available in this version of Zoteus yet.',
        },
        sqlite: {
          configured: false,
          available: null,
          detail: `Reading zotero.sqlite (${config.zoteroDataDir}) is not available in this version of Zoteus yet.`,
        },
      },
      profile: config.profile ?? null,
    };
  },
});
