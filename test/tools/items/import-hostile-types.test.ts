/**
 * Record types are outside text looked up in tables: `constructor`, `__proto__` or `toString`
 * must read as an unknown type (a document), never reach Object.prototype (which crashed the
 * import with internal_error "candidates.find is not a function").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import importTool from '../../../src/tools/items/import.js';
import { LIB, startItemsWorld, type ItemsWorld } from './setup.js';

let w: ItemsWorld;
beforeAll(async () => {
  w = await startItemsWorld();
});
afterAll(() => w.close());

const itemTitled = (title: string) =>
  [...w.world.server.library(LIB).items.values()].find((i) => i.title === title);

describe('record types named like Object.prototype members', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    '%s in CSL-JSON, RIS and BibTeX',
    async (type) => {
      const csl = JSON.stringify([{ id: 'a', type, title: `CSL ${type}` }]);
      const ris = `TY  - ${type}\nTI  - RIS ${type}\nER  - \n`;
      const bib = `@${type}{k, title={BibTeX ${type}}}`;
      for (const [records, format, title] of [
        [csl, 'csljson', `CSL ${type}`],
        [ris, 'ris', `RIS ${type}`],
        [bib, 'bibtex', `BibTeX ${type}`],
      ] as const) {
        if (format === 'bibtex' && !/^[A-Za-z]+$/.test(type)) {
          // Not a BibTeX entry type at all: the text holds no entry, said plainly.
          await expect(importTool.run({ records, format }, w.deps())).rejects.toMatchObject({
            code: 'validation_error',
          });
          continue;
        }
        const out = await importTool.run({ records, format, allow_duplicates: true }, w.deps());
        expect(out.failed, `${format}: ${JSON.stringify(out.failed)}`).toEqual([]);
        expect(out.succeeded).toHaveLength(1);
        expect(itemTitled(title)?.itemType).toBe('document');
      }
    },
  );
});
