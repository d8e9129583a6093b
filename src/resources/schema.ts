/**
 * `zotero://schema`: Zotero's item schema as JSON (item types, their fields with base-field
 * mappings, creator types), the same answer as zotero_schema without an item type.
 */
import { defineResource } from '../core/resource.js';

export default defineResource({
  uri: 'zotero://schema',
  name: 'schema',
  title: 'Zotero item schema',
  description:
    "Zotero's item schema: every item type with its fields (and the base field a type-specific one maps onto, e.g. bookTitle → publicationTitle) and its creator types, primary first; version and source (server: the configured server's /schema; cache or bundled: the local copy, when the server does not answer). The same as zotero_schema.",
  mimeType: 'application/json',
  async read(deps) {
    const { schemaView } = await import('../core/items/schema-view.js');
    return schemaView(deps);
  },
});
