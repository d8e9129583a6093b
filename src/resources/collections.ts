/**
 * `zotero://collections`: every collection of the default library as JSON (all rows, sorted by
 * name, with `complete`), read through the same cached listing as zotero_list_collections.
 */
import { defineResource } from '../core/resource.js';

export default defineResource({
  uri: 'zotero://collections',
  name: 'collections',
  title: 'Zotero collections',
  description:
    'Every collection of the default library (key, name, parentCollection, numItems), sorted by name, with totalResults and complete (false when the library holds more than ZOTEUS_MAX_COLLECTIONS, 100,000 by default). For a page, a name search or a group library use zotero_list_collections.',
  mimeType: 'application/json',
  async read(deps) {
    const { collectionsResource } = await import('../core/library/collections.js');
    return collectionsResource(deps);
  },
});
