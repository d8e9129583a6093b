/** The `zot tag` group: zotero_list_tags, zotero_manage_tags and zotero_tag_audit. */
import { defineGroup } from '../../core/tool.js';

export default defineGroup({
  path: ['tag'],
  summary:
    'Tags: list them, add them to items or remove them, rename or delete them across the library, audit them against a vocabulary.',
});
