/**
 * What a person at a terminal reads on stderr (issue 16, points 4, 6, 14): `Error:` red and
 * `Hint:` dim on a terminal only (stderr's, never with NO_COLOR); a write's follow-up commands
 * as `Next:` lines; `Cancelled.` after answering no; SYNC_REMINDER only when something
 * landed; and detail views without empty rows.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sandbox } from '../../support/cli.js';
import { ALICE, startWorld, type World } from '../../core/library/world.js';
import { zotAt } from './terminal-harness.js';

const RED = (t: string) => `\u001b[31m${t}\u001b[39m`;
const DIM = (t: string) => `\u001b[2m${t}\u001b[22m`;
const SYNC =
  'SYNC_REMINDER: the change is in the Zotero cloud; the desktop app shows it after its next sync.';
const LIB = `users/${ALICE}`;

describe('Error: and Hint: on stderr', () => {
  let box: ReturnType<typeof sandbox>;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());

  // No key: auth_missing, with a hint.
  const run = (tty: { stdout?: boolean; stderr?: boolean }, env: Record<string, string | undefined>) =>
    zotAt(['fixture', 'write', 'hello'], {
      env: { ...box.env, ...env },
      stdoutTTY: tty.stdout ?? false,
      stderrTTY: tty.stderr ?? false,
    });

  it('on a terminal: Error: red, the hint line dim; the same exit code as the JSON envelope', async () => {
    const json = await run({}, {});
    const error = json.json().error as { code: string; message: string; hint: string };
    expect(error.code).toBe('auth_missing');
    expect(error.hint).toBeTruthy();
    const r = await run({ stdout: true, stderr: true }, { NO_COLOR: undefined });
    expect(r.code).toBe(json.code);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${RED('Error:')} ${error.message}\n${DIM(`Hint: ${error.hint}`)}\n`);
  });

  it('no colour with NO_COLOR, nor when stderr is piped (even with stdout a terminal)', async () => {
    const json = (await run({}, {})).json().error as { message: string; hint: string };
    const plain = `Error: ${json.message}\nHint: ${json.hint}\n`;
    expect((await run({ stdout: true, stderr: true }, { NO_COLOR: '1' })).stderr).toBe(plain);
    expect((await run({ stdout: true }, { NO_COLOR: undefined })).stderr).toBe(plain);
  });

  it("stderr's terminal decides: ZOT_FORMAT=table with stdout piped still colours stderr", async () => {
    const error = (await run({}, {})).json().error as { message: string; hint: string };
    const r = await run({ stderr: true }, { NO_COLOR: undefined, ZOT_FORMAT: 'table' });
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${RED('Error:')} ${error.message}\n${DIM(`Hint: ${error.hint}`)}\n`);
  });
});

describe('answering no at the prompt', () => {
  let box: ReturnType<typeof sandbox>;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());
  const destroyed = () =>
    existsSync(join(box.dir, 'destroyed.log')) ? readFileSync(join(box.dir, 'destroyed.log'), 'utf8') : '';

  it('table mode: "Cancelled." on stderr, no Error: and no hint; exit 3; nothing done', async () => {
    const r = await zotAt(['fixture', 'destroy', 'ABCD2345'], {
      env: { ...box.env, NO_COLOR: undefined },
      stdinTTY: true,
      stdoutTTY: true,
      stderrTTY: true,
      stdin: 'n\n',
    });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('[y/N] ');
    // After the question and the echoed answer, the last line is the word alone, uncoloured.
    expect(r.stderr.replace(/\r/g, '').split('\n').slice(-2)).toEqual(['Cancelled.', '']);
    expect(r.stderr).not.toContain('\u001b[31m');
    expect(r.stderr).not.toContain('Error');
    expect(r.stderr).not.toContain('Hint');
    expect(destroyed()).toBe('');
  });

  it('JSON mode: the envelope is still a confirmation_required error (exit 3)', async () => {
    const r = await zotAt(['fixture', 'destroy', 'ABCD2345'], {
      env: box.env,
      stdinTTY: true,
      stdin: 'n\n',
    });
    expect(r.code).toBe(3);
    expect(r.json()).toMatchObject({
      ok: false,
      error: { code: 'confirmation_required', message: 'Cancelled: nothing was changed.' },
    });
    expect(r.stderr).not.toContain('Cancelled.');
    expect(destroyed()).toBe('');
  });
});

describe('a write at a terminal', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(() => world.close());
  const lib = () => world.server.library(LIB);
  const zot = (args: string[], tty: boolean, env: Record<string, string | undefined> = {}) =>
    zotAt(args, { env: world.env(env), stdoutTTY: tty, stderrTTY: tty });

  it('prints its follow-up commands as Next: lines after the reminder, dim on a terminal', async () => {
    const [a, b] = lib().addItems([{ title: 'A' }, { title: 'B' }]) as [string, string];
    const coloured = await zot(['trash', a], true, { NO_COLOR: undefined });
    expect(coloured.code).toBe(0);
    expect(coloured.stderr).toBe(`${SYNC}\n${DIM(`Next: zot trash restore ${a}`)}\n`);
    const plain = await zot(['trash', b], true, { NO_COLOR: '1' });
    expect(plain.stderr).toBe(`${SYNC}\nNext: zot trash restore ${b}\n`);
  });

  it('in JSON mode the follow-ups stay in the envelope and stderr has no Next: line', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const r = await zot(['trash', a], false);
    expect(r.json().next).toEqual([`zot trash restore ${a}`]);
    expect(r.stderr).toBe(`${SYNC}\n`);
  });

  it('leaves empty rows (unchanged: [], failed: []) out of the detail view', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const r = await zot(['trash', 'restore', a], true, { NO_COLOR: '1' });
    expect(r.code).toBe(0);
    const version = (lib() as unknown as { version: number }).version;
    expect(r.stdout).toBe(
      [
        'Restored 0 items from the trash (1 already there).',
        'action          restore',
        `unchanged       ${a}`,
        `libraryVersion  ${version}`,
        'sync_required   true',
        'written_to      cloud',
        '',
      ].join('\n'),
    );
  });
});

describe('SYNC_REMINDER only when something landed', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(() => world.close());
  const lib = () => world.server.library(LIB);
  const zot = (args: string[]) => zotAt(args, { env: world.env() });

  it('a call that changed nothing (every item already in the wanted state) prints none', async () => {
    const [a] = lib().addItems([{ title: 'A', deleted: true }]) as [string];
    const r = await zot(['trash', a]);
    expect(r.code).toBe(0);
    expect(r.json().data).toMatchObject({ updated: [], unchanged: [a], sync_required: true });
    expect(r.stderr).toBe('');
  });

  it('a dry run prints none; a call whose every entry failed prints none', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const dry = await zot(['trash', a, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toBe('');
    const failed = await zot(['trash', 'ZZZZ2345']);
    expect(failed.code).toBe(4);
    expect(failed.json()).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(failed.stderr).toBe('');
  });

  it('a call that landed one item of two prints it (partial, exit 7)', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const r = await zot(['trash', a, 'ZZZZ2345']);
    expect(r.code).toBe(7);
    expect(r.stderr).toBe(`${SYNC}\n`);
  });
});
