/** The `zot trash` group of the items: zotero_trash_items. */
import { defineGroup } from '../../core/tool.js';

export default defineGroup({
  path: ['trash'],
  summary: 'The trash: `zot trash KEY…` moves items to it, `zot trash restore KEY…` brings them back.',
});
