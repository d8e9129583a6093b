/** The `zot index` group: zotero_index. */
import { defineGroup } from '../../core/tool.js';

export default defineGroup({
  path: ['index'],
  summary: 'The local search index of a library: build it, update it, or show its status.',
});
