/**
 * Refusals in the user's terms through the built CLI (issue 16, point 11): the argument by its
 * command-line name, what it accepts, and "did you mean" for unknown commands and flags. Run
 * `npm run build` first.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runZot, sandbox } from '../../support/cli.js';

let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

async function refusal(args: string[]) {
  const r = await runZot(args, { env: box.env });
  const error = r.json().error as { code: string; message: string; hint?: string; field?: string };
  return { exit: r.code, ...error };
}

describe('zod issues become the command line’s words', () => {
  it('a missing positional names it and what it takes, with an example', async () => {
    expect(await refusal(['read'])).toMatchObject({
      code: 'validation_error',
      field: 'item_key',
      message:
        'ITEM_KEY is required: an 8-character Zotero item key (digits 2-9 and capital letters except O), e.g. `zot read ABCD2345`.',
      hint: 'Run `zot schema read` for the accepted arguments.',
    });
  });

  it.each([
    ['2.5', '--limit must be a whole number from 1 to 100 (got 2.5).'],
    ['-5', '--limit must be a whole number from 1 to 100 (got -5).'],
    ['0x10', "--limit must be a whole number from 1 to 100 (got '0x10')."],
    ['0', '--limit must be a whole number from 1 to 100 (got 0).'],
  ])('--limit %s', async (value, message) => {
    const r = await refusal(['search', 'x', '--limit', value]);
    expect(r).toMatchObject({ exit: 3, code: 'validation_error', field: 'limit', message });
    expect(r.message).not.toMatch(/expected|received|ambiguous/i);
  });

  it('a flag without its value', async () => {
    expect(await refusal(['search', 'x', '--limit'])).toMatchObject({
      code: 'validation_error',
      message: '--limit needs a value.',
      hint: 'Run `zot search --help` for the accepted flags. A value that starts with a dash is written --limit=-VALUE.',
    });
  });
});

describe('did you mean', () => {
  it('an unknown command', async () => {
    const r = await refusal(['serch', 'x']);
    expect(r).toMatchObject({ exit: 3, code: 'validation_error' });
    expect(r.message).toBe("Unknown command 'serch' for `zot`: did you mean `zot search`?");
    expect(r.hint).toMatch(/^Commands here: add, /);
  });

  it('an unknown subcommand', async () => {
    expect((await refusal(['collection', 'lst'])).message).toBe(
      "Unknown command 'lst' for `zot collection`: did you mean `zot collection list`?",
    );
  });

  it('an unknown flag', async () => {
    expect(await refusal(['search', 'x', '--limt', '3'])).toMatchObject({
      code: 'validation_error',
      message: 'Unknown flag --limt for `zot search`: did you mean --limit?',
      hint: 'Run `zot search --help` for the accepted flags.',
    });
  });

  it('nothing close: no guess', async () => {
    expect((await refusal(['frobnicate'])).message).toBe("Unknown command 'frobnicate' for `zot`.");
  });
});

describe('library addresses', () => {
  it('--library-id 0 says what it takes without contradicting itself', async () => {
    const r = await refusal(['search', 'x', '--library-id', '0']);
    expect(r).toMatchObject({ exit: 3, field: 'library_id' });
    expect(r.message).toBe('--library-id must be a whole number, 1 or more (got 0).');
  });
});
