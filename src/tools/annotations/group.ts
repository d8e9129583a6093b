/** The `zot annotation` group: zotero_list_annotations and zotero_create_annotation. */
import { defineGroup } from '../../core/tool.js';

export default defineGroup({
  path: ['annotation'],
  summary: 'PDF annotations: `zot annotation list KEY` lists an item’s highlights and notes.',
});
