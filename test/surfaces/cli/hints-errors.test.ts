/**
 * Errors with a hint where one can help (issue 16, point 11): a file option naming a file that
 * is not there, an unknown `zot config get` setting, `zot tag …` without its tag or items, and
 * the other refusals of the parser's built-ins and file inputs. The CLI runs in process; no
 * server listens (a request would be a network_error, exit 5, not these exit 3s).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderErrorRefs } from '../../../src/core/call/refs.js';
import { ZoteusError } from '../../../src/core/errors.js';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { mcpRefRenderer } from '../../../src/surfaces/mcp/refs.js';
import manageTags from '../../../src/tools/tags/manage-tags.js';
import { groups, tools } from '../../../src/tools/index.js';
import { sandbox } from '../../support/cli.js';

let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

async function zot(argv: string[], options: { tty?: boolean; stdin?: string } = {}) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      }),
      { isTTY: options.tty ?? false, columns: 200 },
    );
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end(options.stdin ?? '');
  const code = await runCli({
    argv,
    env: box.env,
    io: { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), stdin },
    tools,
    groups,
  });
  return { code, stdout, stderr };
}

async function refused(argv: string[], stdin?: string) {
  const r = await zot(argv, stdin === undefined ? {} : { stdin });
  expect(r.code, r.stdout).toBe(3);
  const envelope = JSON.parse(r.stdout) as {
    ok: boolean;
    error: { code: string; message: string; hint?: string; field?: string };
  };
  expect(envelope.ok).toBe(false);
  expect(envelope.error.code).toBe('validation_error');
  return envelope.error;
}

const ROW = JSON.stringify([
  { item_key: 'ABCD2345', study: 'S', finding: 'F', coverage: 'abstract-only', support: 'unverified' },
]);

describe('a file input that cannot be read', () => {
  it('--rows /nonexistent: the file is not found, with its path, and how to pass a file or stdin', async () => {
    expect(await refused(['evidence-table', '--question', 'Q', '--rows', '/nonexistent'])).toEqual({
      code: 'validation_error',
      message: '--rows: file not found: /nonexistent.',
      hint: 'Give --rows the path of a JSON file you can read (`--rows FILE`), or - to read it from stdin (`--rows - < FILE`).',
      field: 'rows',
      retryable: false,
    });
    // At a terminal the same, as Error:/Hint: lines on stderr.
    const tty = await zot(['evidence-table', '--question', 'Q', '--rows', '/nonexistent'], { tty: true });
    expect(tty.code).toBe(3);
    expect(tty.stderr).toContain('Error: --rows: file not found: /nonexistent.\n');
    expect(tty.stderr).toContain(
      'Hint: Give --rows the path of a JSON file you can read (`--rows FILE`), or - to read it from stdin (`--rows - < FILE`).',
    );
  });

  it('a directory, and a file that is not JSON, are said as such, with a hint', async () => {
    const dir = join(box.dir, 'rows.d');
    mkdirSync(dir);
    expect(await refused(['evidence-table', '--question', 'Q', '--rows', dir])).toMatchObject({
      message: `--rows: ${dir} is a directory, not a file.`,
      hint: expect.stringContaining('`--rows - < FILE`'),
    });
    const text = join(box.dir, 'rows.txt');
    writeFileSync(text, 'item_key,study\n');
    const notJson = await refused(['evidence-table', '--question', 'Q', '--rows', text]);
    expect(notJson.message).toMatch(new RegExp(`^--rows: ${text} is not valid JSON \\(`));
    expect(notJson.hint).toBe('--rows takes one JSON document (UTF-8); a list is written [{…}, {…}].');
  });

  it('a required file input that is not given says it takes a path or -', async () => {
    expect(await refused(['evidence-table', '--question', 'Q'])).toMatchObject({
      field: 'rows',
      message:
        '--rows is required: the path of a JSON file, or - to read it from stdin, e.g. `--rows rows.json`.',
    });
    // Given, the same input reads stdin.
    const ok = await zot(['evidence-table', '--question', 'Q', '--rows', '-'], { stdin: ROW });
    expect(ok.code).toBe(0);
  });
});

describe('zot config get with an unknown or missing setting', () => {
  const SETTINGS =
    "'library_id', 'library_type', 'api_url', 'api_key', 'local_api_key', 'zotero_data_dir', 'data_dir'";

  it('lists the settings, and says which one was meant when one is close', async () => {
    expect(await refused(['config', 'get', 'nope'])).toEqual({
      code: 'validation_error',
      message: `NAME must be one of ${SETTINGS} (got "nope").`,
      hint: 'Example: `zot config get library_id`.',
      field: 'name',
      retryable: false,
    });
    expect(await refused(['config', 'get', 'api-key'])).toMatchObject({
      message: `NAME must be one of ${SETTINGS} (got "api-key"); did you mean 'api_key'?`,
      hint: 'Example: `zot config get api_key`.',
    });
    expect(await refused(['config', 'get'])).toMatchObject({
      message: `NAME is required: one of ${SETTINGS}.`,
      hint: 'Example: `zot config get library_id`.',
    });
  });

  it("a built-in's whole-number option is checked as a tool's would be", async () => {
    expect(await refused(['mcp', '--port', 'abc'])).toMatchObject({
      field: 'port',
      message: '--port must be a whole number (got "abc").',
      hint: 'Run `zot mcp --help` for the accepted arguments.',
    });
  });
});

describe('zot tag … without what it needs', () => {
  it('tag add without a tag: a tag is required, with an example command', async () => {
    expect(await refused(['tag', 'add'])).toEqual({
      code: 'validation_error',
      message: 'A tag is required: the tag to add to the items.',
      hint: 'For example: `zot tag add to-read ABCD2345`.',
      field: 'tag',
      retryable: false,
    });
  });

  it('the other missing parts, each with an example that keeps what was given', async () => {
    expect(await refused(['tag', 'add', 'climate'])).toMatchObject({
      field: 'item_keys',
      message: 'Item keys are required: the items to add the tag to.',
      hint: 'For example: `zot tag add climate ABCD2345`.',
    });
    expect(await refused(['tag', 'remove'])).toMatchObject({
      message: 'A tag is required: the tag to remove from the items.',
      hint: 'For example: `zot tag remove to-read ABCD2345`.',
    });
    expect(await refused(['tag', 'rename', 'climate'])).toMatchObject({
      field: 'new_name',
      message: 'The new name of the tag is required.',
      hint: 'For example: `zot tag rename climate reading`.',
    });
    expect(await refused(['tag', 'rename', 'climate', 'climate'])).toMatchObject({
      message: "The new name is the tag's own name ('climate'): nothing to rename.",
      hint: 'For example: `zot tag rename climate reading`.',
    });
    expect(await refused(['tag', 'delete'])).toMatchObject({
      field: 'tags',
      message: 'At least one tag to delete is required.',
      hint: 'For example: `zot tag delete to-read`.',
    });
  });

  it('on MCP the same hint names the tool and its arguments', () => {
    let thrown: unknown;
    try {
      manageTags.check!({ action: 'add_items' }, {} as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ZoteusError);
    const rendered = renderErrorRefs(thrown as ZoteusError, mcpRefRenderer);
    expect(rendered.message).toBe('A tag is required: the tag to add to the items.');
    expect(rendered.hint).toBe(
      'For example: zotero_manage_tags (action: add_items, tag: to-read, item_keys: ABCD2345).',
    );
  });
});
