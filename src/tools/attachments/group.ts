/** The `zot attachment` group: an item's attachment files (zotero_get_attachment). */
import { defineGroup } from '../../core/tool.js';

export default defineGroup({
  path: ['attachment'],
  summary:
    'Attachment files: `zot attachment list KEY` lists an item’s files and where they are, `zot attachment get KEY` reads or saves one.',
});
