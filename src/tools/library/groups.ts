import * as z from 'zod';
import { fitRows, nextStartOf } from '../../core/items/read/bounds.js';
import { defineTool } from '../../core/tool.js';
import { answeredFields, nextStartField } from '../shared/output.js';
import { pagingParams, type PageSize } from '../shared/params.js';

const PAGE: PageSize = { rows: 'Groups', default: 100, max: 500 };

const group = z.object({
  id: z
    .number()
    .int()
    .describe('Group id: pass it as library_id (alone, it means a group) to address this library.'),
  name: z.string(),
  type: z
    .string()
    .optional()
    .describe(
      'Private, PublicOpen or PublicClosed; absent when the desktop’s Zotero answered (it does not keep it).',
    ),
  numItems: z
    .number()
    .int()
    .optional()
    .describe('Items in the group library (trash excluded); absent when the server does not say.'),
  owner: z
    .number()
    .int()
    .optional()
    .describe('User id of the group owner; absent when the desktop’s Zotero answered (it does not keep it).'),
  canRead: z
    .boolean()
    .describe("Whether this API key (without a key: the desktop's Zotero) may read the group's library."),
  canWrite: z
    .boolean()
    .describe(
      'Whether this API key may change the library: the key needs write access to the group, and when the group lets only admins edit, the key’s user must be its owner or an admin. Always false without a key (writes go through the Web API).',
    ),
});

interface GroupObject {
  id?: unknown;
  meta?: { numItems?: unknown };
  data?: {
    id?: unknown;
    name?: unknown;
    owner?: unknown;
    type?: unknown;
    libraryEditing?: unknown;
    admins?: unknown;
  };
}

export default defineTool({
  name: 'zotero_groups',
  title: 'List group libraries',
  summary:
    'List the group libraries the API key reaches (without a key: those the desktop app holds), with item counts and whether the key can write.',
  description: [
    'List the group libraries your ZOTERO_API_KEY reaches (Web API), with canWrite: a group id is the library_id that',
    'addresses it; check canWrite before writing there. Without a key: the groups the desktop holds (zotero.sqlite),',
    'read-only. Your library and key: zotero_whoami.',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'library',
  inDefaultSet: true,
  cli: [{ path: ['groups'] }],
  input: z
    .object({
      ...pagingParams(PAGE),
    })
    .strict(),
  output: z.object({
    groups: z
      .array(group)
      .describe(
        'This page of the groups the key (without a key: the desktop) reaches, sorted by name (then id).',
      ),
    totalResults: z.number().int().describe('How many groups the server (or the desktop) lists.'),
    backend: answeredFields.backend,
    complete: z
      .boolean()
      .describe(
        'False when the listing stopped early (a server that ignores paging, or the cap); see message.',
      ),
    message: z.string().optional().describe('Why the listing is incomplete; absent when complete.'),
    start: z.number().int().optional().describe('The offset this page starts at.'),
    nextStart: nextStartField,
    truncated: z
      .boolean()
      .optional()
      .describe('True when the answer’s size bound (about 40 KB of rows) cut the page short of limit.'),
  }),
  rows: 'groups',
  summarize: (out) => {
    const writable = out.groups.filter((g) => g.canWrite).length;
    const start = out.start ?? 0;
    const page =
      out.nextStart !== undefined || start > 0
        ? ` (${start + 1}–${start + out.groups.length} of ${out.totalResults}${out.nextStart !== undefined ? `; continue with start=${out.nextStart}` : ''})`
        : '';
    const where =
      out.backend === 'web'
        ? `reachable with this key (${writable} writable)`
        : "in the desktop app's Zotero (read-only: no API key)";
    return `${out.groups.length} group${out.groups.length === 1 ? '' : 's'} ${where}${page}.`;
  },
  async run(input, deps) {
    const start = input.start ?? 0;
    const pageOf = <G extends { name: string; id: number }>(all: G[]) => {
      all.sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
      const page = fitRows(all.slice(start, start + (input.limit ?? PAGE.default)));
      const nextStart = nextStartOf(start, page.rows.length, all.length);
      return {
        groups: page.rows,
        start,
        ...(nextStart !== undefined ? { nextStart } : {}),
        ...(page.cut ? { truncated: true } : {}),
      };
    };
    if (deps.config.apiKey === undefined) {
      // No key: the groups the desktop holds, when there is a desktop (else auth_missing).
      const { desktopGroups } = await import('../../core/library/groups.js');
      const local = await desktopGroups(deps);
      const groups = local.groups.map((g) => ({ ...g, canRead: true, canWrite: false }));
      return { ...pageOf(groups), totalResults: groups.length, complete: true, backend: local.backend };
    }
    const { checkKey, webClient } = await import('../../core/library/keys.js');
    const { grantFor } = await import('../../core/library/web.js');
    const client = await webClient(deps);
    const call = client.newCall();
    const { info } = await checkKey(deps, { call });
    // Not revalidated from the client's cache: a group's item count changes without its version.
    const listing = await client.listAll<GroupObject>(`/users/${info.userID}/groups`, {
      cache: false,
      keyOf: (o) =>
        String((o as GroupObject | null)?.id ?? (o as GroupObject | null)?.data?.id ?? JSON.stringify(o)),
      call,
    });
    const groups = [];
    for (const object of listing.objects) {
      const data = object.data ?? {};
      const id = typeof object.id === 'number' ? object.id : data.id;
      if (typeof id !== 'number' || !Number.isSafeInteger(id)) continue;
      const owner = typeof data.owner === 'number' ? data.owner : 0;
      const grant = grantFor(info, { type: 'group', id });
      // Listed groups are the user's own, so `groups.all` applies. Only-admins editing needs the
      // user to be owner or admin; when the server does not list the admins, assume not.
      const admins = Array.isArray(data.admins) ? data.admins : [];
      const editor =
        data.libraryEditing !== 'admins' || owner === info.userID || admins.includes(info.userID);
      const numItems = object.meta?.numItems;
      groups.push({
        id,
        name: typeof data.name === 'string' ? data.name : '',
        type: typeof data.type === 'string' ? data.type : '',
        ...(typeof numItems === 'number' && Number.isSafeInteger(numItems) ? { numItems } : {}),
        owner,
        canRead: grant.read,
        canWrite: grant.write && editor,
      });
    }
    return {
      ...pageOf(groups),
      totalResults: listing.totalResults,
      backend: 'web' as const,
      complete: listing.complete,
      ...(listing.message !== undefined ? { message: listing.message } : {}),
    };
  },
});
