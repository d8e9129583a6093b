/** The `zot saved-search` group: zotero_saved_searches and zotero_manage_saved_searches. */
import { defineGroup } from '../../core/tool.js';

export default defineGroup({
  path: ['saved-search'],
  summary:
    'Saved searches: list them and show their conditions, run one (through the desktop app), create or delete one.',
});
