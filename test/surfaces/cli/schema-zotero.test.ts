/** `zot schema --zotero [ITEM_TYPE]`: the catalogue's spelling of zotero_schema (also `zot item-types`). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runZot, sandbox } from '../../support/cli.js';

let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

const data = (r: { json(): Record<string, unknown> }) => (r.json() as { data: unknown }).data;

describe('zot schema --zotero', () => {
  it('is zot item-types, offline from the bundled schema', async () => {
    const env = { ...box.env, ZOTEUS_LOCAL: 'off' };
    const viaSchema = await runZot(['schema', '--zotero', 'book'], { env });
    const direct = await runZot(['item-types', 'book'], { env });
    expect(viaSchema.code).toBe(0);
    expect(data(viaSchema)).toEqual(data(direct));
    expect(data(viaSchema)).toMatchObject({ itemTypes: [{ itemType: 'book' }] });
  });

  it('without --zotero, `zot schema` still describes the command tree', async () => {
    const r = await runZot(['schema'], { env: box.env });
    expect(data(r)).toMatchObject({ name: 'zot' });
  });
});
