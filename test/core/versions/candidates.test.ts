/**
 * Which items update-status looks up (core/versions/candidates.ts), each reason on its own:
 * the preprint type, a preprint server's DOI (in the DOI field or an Extra `DOI:` line), a
 * preprint server's URL, early access; and what the published version changes in Extra
 * (core/versions/changes.ts): the preprint's arXiv id or DOI kept, other lines untouched.
 */
import { describe, expect, it } from 'vitest';
import { buildSchema, readBundledSchema } from '../../../src/core/items/schema.js';
import { candidateOf, preprintServerOfDoi } from '../../../src/core/versions/candidates.js';
import { statusChanges } from '../../../src/core/versions/changes.js';

describe('candidateOf', () => {
  it('a preprint is a candidate by its type, with the server and identifiers it has', () => {
    expect(candidateOf({ itemType: 'preprint', title: 'x' })).toEqual({ reason: 'preprint_type' });
    expect(candidateOf({ itemType: 'preprint', DOI: '10.1101/2020.01.01.111111', archiveID: '' })).toEqual({
      reason: 'preprint_type',
      server: 'bioRxiv/medRxiv',
      doi: '10.1101/2020.01.01.111111',
    });
    expect(candidateOf({ itemType: 'preprint', archiveID: 'arXiv:2101.00001' })).toEqual({
      reason: 'preprint_type',
      server: 'arXiv',
      arxiv: '2101.00001',
    });
  });

  it('another type is a candidate by a preprint server DOI, in the DOI field or an Extra DOI: line', () => {
    expect(candidateOf({ itemType: 'report', DOI: '10.2139/ssrn.3456789' })).toEqual({
      reason: 'preprint_server',
      server: 'SSRN',
      doi: '10.2139/ssrn.3456789',
    });
    expect(
      candidateOf({ itemType: 'document', extra: 'Note: x\nDOI: 10.26434/chemrxiv-2021-abcde' }),
    ).toEqual({ reason: 'preprint_server', server: 'ChemRxiv', doi: '10.26434/chemrxiv-2021-abcde' });
    expect(candidateOf({ itemType: 'journalArticle', DOI: '10.31219/osf.io/abcde' })).toMatchObject({
      reason: 'preprint_server',
      server: 'OSF Preprints',
    });
    expect(candidateOf({ itemType: 'journalArticle', DOI: '10.48550/arXiv.2101.00001' })).toEqual({
      reason: 'preprint_server',
      server: 'arXiv',
      doi: '10.48550/arXiv.2101.00001',
      arxiv: '2101.00001',
    });
  });

  it('a journal article is a candidate by a preprint server URL only when it has no journal DOI', () => {
    expect(
      candidateOf({ itemType: 'journalArticle', url: 'https://www.medrxiv.org/content/10.1101/x' }),
    ).toEqual({ reason: 'preprint_server', server: 'bioRxiv/medRxiv' });
    expect(
      candidateOf({ itemType: 'journalArticle', url: 'https://www.researchsquare.com/article/rs-1/v1' }),
    ).toEqual({ reason: 'preprint_server', server: 'Research Square' });
    // A journal DOI says it is the published version already; with its issue, nothing to do.
    expect(
      candidateOf({
        itemType: 'journalArticle',
        DOI: '10.5555/j.1',
        volume: '3',
        url: 'https://www.biorxiv.org/content/10.1101/x',
      }),
    ).toBeUndefined();
  });

  it('a journal article with a journal DOI and no volume, issue or pages is early access', () => {
    expect(candidateOf({ itemType: 'journalArticle', DOI: '10.5555/ea.1' })).toEqual({
      reason: 'early_access',
      doi: '10.5555/ea.1',
    });
    for (const filled of [{ volume: '1' }, { issue: '2' }, { pages: '3-4' }])
      expect(candidateOf({ itemType: 'journalArticle', DOI: '10.5555/ea.1', ...filled })).toBeUndefined();
    // Only journal articles: a book chapter without pages is no early-access article.
    expect(candidateOf({ itemType: 'bookSection', DOI: '10.5555/ch.1' })).toBeUndefined();
    expect(candidateOf({ itemType: 'journalArticle', title: 'no DOI' })).toBeUndefined();
  });

  it('10.1101 is a preprint server only for dated or six-digit bioRxiv/medRxiv DOIs', () => {
    expect(preprintServerOfDoi('10.1101/2020.01.01.111111v2')).toBe('bioRxiv/medRxiv');
    expect(preprintServerOfDoi('10.1101/123456')).toBe('bioRxiv/medRxiv');
    // Cold Spring Harbor's journals share the prefix.
    expect(preprintServerOfDoi('10.1101/gr.123456.110')).toBeUndefined();
  });
});

describe('statusChanges: the preprint identifiers kept in Extra', () => {
  const schema = buildSchema(readBundledSchema(), 'bundled');
  const published = {
    itemType: 'journalArticle',
    publicationTitle: 'Journal of Coasts',
    volume: '12',
    DOI: '10.5555/pub.1',
    url: 'https://doi.org/10.5555/pub.1',
  };
  const extraOf = (data: Record<string, unknown>) => {
    const candidate = candidateOf(data);
    if (!candidate) throw new Error('not a candidate');
    return statusChanges(schema, data, published, candidate).find((c) => c.field === 'extra');
  };

  it('adds a Preprint DOI line for the DOI the published one replaces, after the lines already there', () => {
    expect(extraOf({ itemType: 'preprint', DOI: '10.21203/rs.3.rs-111111/v1' })).toEqual({
      field: 'extra',
      from: '',
      to: 'Preprint DOI: 10.21203/rs.3.rs-111111/v1',
    });
    expect(
      extraOf({ itemType: 'preprint', DOI: '10.2139/ssrn.1', extra: 'Original Date: 2019\n\n' }),
    ).toEqual({
      field: 'extra',
      from: 'Original Date: 2019\n\n',
      to: 'Original Date: 2019\nPreprint DOI: 10.2139/ssrn.1',
    });
  });

  it('adds no second line when Extra names the DOI already, and none for an arXiv DOI (its arXiv: line keeps it)', () => {
    expect(
      extraOf({ itemType: 'preprint', DOI: '10.2139/ssrn.1', extra: 'Preprint DOI: 10.2139/SSRN.1' }),
    ).toBeUndefined();
    expect(extraOf({ itemType: 'preprint', DOI: '10.48550/arXiv.2101.00001' })).toEqual({
      field: 'extra',
      from: '',
      to: 'arXiv: 2101.00001',
    });
  });

  it('early access keeps its own DOI: Extra is left alone', () => {
    const data = { itemType: 'journalArticle', DOI: '10.5555/pub.1', extra: 'mine' };
    const candidate = candidateOf(data);
    expect(candidate?.reason).toBe('early_access');
    const changes = statusChanges(schema, data, published, candidate!);
    expect(changes.map((c) => c.field)).toEqual(['publicationTitle', 'volume']);
  });
});
