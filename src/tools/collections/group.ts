/** The `zot collection` group: zotero_list_collections and zotero_manage_collections. */
import { defineGroup } from '../../core/tool.js';

export default defineGroup({
  path: ['collection'],
  summary:
    'Collections: list, create, rename, move and delete them, and add or remove items (the items stay in the library).',
});
