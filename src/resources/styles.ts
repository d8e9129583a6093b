/**
 * `zotero://styles`: the CSL citation styles and locales available offline as JSON (every
 * style, unpaged), the same listing as zotero_styles without q.
 */
import { defineResource } from '../core/resource.js';

export default defineResource({
  uri: 'zotero://styles',
  name: 'styles',
  title: 'Citation styles available offline',
  description:
    'The CSL citation styles that work offline, sorted by id: installed in the Zotero desktop’s styles folder, downloaded by Zoteus before, or bundled with it (APA, Vancouver, Harvard Cite Them Right), each with id, title, source, dependent (and its parent), class (in-text or note), citationFormat and defaultLocale; totalResults; defaultStyle (ZOTEUS_CITATION_STYLE, else apa); repository (where any other id of the Zotero style repository is downloaded from, once, on first use); and the CSL locales available offline. No key, no network. The same as zotero_styles without q; pass a style id to zotero_format_bibliography.',
  mimeType: 'application/json',
  async read(deps) {
    const { styleCatalogue } = await import('../core/citations/styles.js');
    const all = await styleCatalogue(deps, {}, Infinity);
    return {
      styles: all.styles,
      totalResults: all.totalResults,
      defaultStyle: all.defaultStyle,
      repository: all.repository,
      locales: all.locales,
    };
  },
});
