/**
 * What `zot attach --oa` checks and plans offline (light: the tool declaration loads it, so it
 * imports nothing that reaches the network): which sources a call may ask, and its dry-run plan.
 */
import { paramRef } from '../call/refs.js';
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import type { Deps } from '../tool.js';

/** Pages of a candidate PDF searched for the item's title or DOI. */
export const CHECKED_PAGES = 3;

export interface OaInput extends LibraryArgs {
  parent_item: string;
  title?: string | undefined;
}

/** Which sources a call may ask; the offline refusal when it may ask none. */
export function checkOpenAccessConfig(config: Deps['config']): void {
  const oa = config.openAccess;
  if (oa.unpaywallEmail === undefined && config.metadata.openalexKey === undefined) {
    throw new ZoteusError(
      'validation_error',
      `${paramRef('oa')} finds PDFs through Unpaywall, which asks for an e-mail address: ZOTEUS_UNPAYWALL_EMAIL is not set (nor ZOTEUS_OPENALEX_API_KEY, for OpenAlex).`,
      {
        field: 'ZOTEUS_UNPAYWALL_EMAIL',
        hint: 'Set ZOTEUS_UNPAYWALL_EMAIL to your e-mail address (and ZOTEUS_OPENALEX_API_KEY to also ask OpenAlex), then retry.',
      },
    );
  }
}

/** The dry-run plan: what would be asked and checked, offline (the DOI is read only then). */
export function planOpenAccess(config: Deps['config'], input: OaInput): Record<string, unknown> {
  checkOpenAccessConfig(config);
  const oa = config.openAccess;
  const sources: Array<Record<string, unknown>> = [];
  if (oa.unpaywallEmail !== undefined)
    sources.push({
      source: 'unpaywall',
      request: `GET ${oa.unpaywallUrl}/v2/{DOI}?email=${oa.unpaywallEmail}`,
    });
  else sources.push({ source: 'unpaywall', skipped: 'ZOTEUS_UNPAYWALL_EMAIL is not set' });
  if (config.metadata.openalexKey !== undefined)
    sources.push({
      source: 'openalex',
      request: `GET ${config.metadata.openalex}/works/doi:{DOI}`,
      key: 'ZOTEUS_OPENALEX_API_KEY, sent as api_key',
      when: 'no Unpaywall candidate passes',
    });
  else sources.push({ source: 'openalex', skipped: 'ZOTEUS_OPENALEX_API_KEY is not set' });
  return {
    parent_item: input.parent_item,
    doi: `read from item ${input.parent_item} (its DOI field, or a DOI: line in Extra)`,
    sources,
    download: {
      maxBytes: oa.maxBytes,
      checks: [
        'starts with %PDF-',
        'has at least one page',
        `its first ${CHECKED_PAGES} pages mention the item's title or DOI`,
      ],
    },
    attach: 'the first candidate that passes, uploaded to Zotero storage',
    ...(input.title !== undefined ? { title: input.title } : {}),
  };
}
