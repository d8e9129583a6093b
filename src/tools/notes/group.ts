/** The `zot note` group: zotero_list_notes and zotero_create_note. */
import { defineGroup } from '../../core/tool.js';

export default defineGroup({
  path: ['note'],
  summary: 'Child notes of an item: `zot note KEY` lists them, `zot note add KEY TEXT` adds one.',
});
