/**
 * `zot config init` as a person answers it at a terminal (issue 16, point 7): an invalid answer
 * is asked again after saying what was wrong (three answers at most), the defaults of the
 * environment and of the profile are shown in brackets and kept by Enter, a secret default is
 * masked, and the wizard ends by saying where it saved and what to try next. The CLI runs in
 * process with a stdin that claims to be a TTY and a typist that answers each question only
 * once it has been asked, as a person does.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { buildTree, findNode } from '../../../src/surfaces/cli/tree.js';
import { groups, tools } from '../../../src/tools/index.js';
import { sandbox } from '../../support/cli.js';

const KEY = 'Wz4rdK3yAbCdEf1234567890';
const OTHER_KEY = 'Pr0f1leK3yAbCdEf12345678';

let box: ReturnType<typeof sandbox>;
let configFile: string;
beforeEach(() => {
  box = sandbox();
  configFile = join(box.env.ZOT_CONFIG_DIR as string, 'config.json');
});
afterEach(() => box.cleanup());

/** The text without the terminal's cursor codes (ESC [ … letter) that readline writes around a prompt. */
const CURSOR_CODE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');
const strip = (text: string) => text.replace(CURSOR_CODE, '');

/**
 * Runs `zot config init` with stdout piped (its result is an envelope) and stdin a TTY; each
 * answer is typed when a question (a line ending in ": ") has been asked. Returns what the
 * person saw on stderr, line by line, without the terminal's cursor codes.
 */
async function wizard(answers: string[], env: Record<string, string | undefined> = box.env) {
  let stdout = '';
  let stderr = '';
  let since = '';
  let asked = 0;
  const queue = [...answers];
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const stderrStream = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        stderr += String(chunk);
        since += strip(String(chunk));
        if (since.endsWith(': ')) {
          since = '';
          asked += 1;
          const answer = queue.shift();
          setImmediate(() => (answer === undefined ? stdin.end() : stdin.write(`${answer}\n`)));
        }
        done();
      },
    }),
    { isTTY: true },
  );
  const stdoutStream = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        stdout += String(chunk);
        done();
      },
    }),
    { isTTY: false },
  );
  const code = await runCli({
    argv: ['config', 'init'],
    env,
    io: { stdout: stdoutStream, stderr: stderrStream, stdin },
    tools,
    groups,
  });
  stdin.end();
  const lines = strip(stderr)
    .split(/\r?\n/)
    .filter((l) => l !== '');
  return {
    code,
    asked,
    stderr,
    lines,
    envelope: JSON.parse(stdout) as {
      ok: boolean;
      data?: Record<string, unknown>;
      error?: Record<string, unknown>;
    },
  };
}

const savedProfile = () =>
  (JSON.parse(readFileSync(configFile, 'utf8')) as { profiles: Record<string, unknown> }).profiles.default;

describe('zot config init re-asks an invalid answer', () => {
  it('says what was wrong, asks the same question again, then saves and says what to try', async () => {
    const r = await wizard(['abc', '12345', 'usr', 'user', 'ftp://x', '', 'Ab1de', KEY, '/data/Zotero']);
    expect(r.code).toBe(0);
    expect(r.envelope).toMatchObject({
      ok: true,
      data: { configFile, profile: 'default', apiKey: '[REDACTED]' },
    });
    expect(r.lines).toEqual([
      `Profile 'default' in ${configFile}. Enter keeps the value in brackets.`,
      'Library id (your userID, or a group id): abc',
      "The library id must be a whole number, your userID or a group's id (https://www.zotero.org/settings/keys shows your userID); got 'abc'. Try again, or press Enter to leave it unset.",
      'Library id (your userID, or a group id): 12345',
      'Library type (user or group) [user]: usr',
      "The library type must be user or group; got 'usr'. Try again, or press Enter to keep the value in brackets.",
      'Library type (user or group) [user]: user',
      'Web API URL [http://127.0.0.1:9, from the environment]: ftp://x',
      "The Web API URL must be an http(s) URL; got 'ftp://x'. Try again, or press Enter to keep the value in brackets.",
      'Web API URL [http://127.0.0.1:9, from the environment]: ',
      // The key is read without echo: neither answer shows.
      'API key (https://www.zotero.org/settings/keys): ',
      'The API key is too short (5 characters; at least 8 are needed so that it can be redacted from every output). Try again, or press Enter to leave it unset.',
      'API key (https://www.zotero.org/settings/keys): ',
      `Zotero data directory [${box.env.ZOTERO_DATA_DIR}, from the environment]: /data/Zotero`,
      `Saved to ${configFile}. Try: zot whoami`,
    ]);
    expect(r.stderr).not.toContain(KEY);
    expect(r.stderr).not.toContain('Ab1de');
    expect(savedProfile()).toEqual({
      library_id: '12345',
      library_type: 'user',
      api_url: 'http://127.0.0.1:9',
      api_key: KEY,
      zotero_data_dir: '/data/Zotero',
    });
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    // What it suggests is a command there is.
    expect(findNode(buildTree(tools), ['whoami']).used).toBe(1);
  });

  it('gives up after three refused answers to one question, with validation_error, saving nothing', async () => {
    const r = await wizard(['x', 'y', 'z', '12345']);
    expect(r.code).toBe(3);
    expect(r.asked).toBe(3);
    expect(r.envelope.error).toMatchObject({
      code: 'validation_error',
      message:
        "The library id must be a whole number, your userID or a group's id (https://www.zotero.org/settings/keys shows your userID); got 'z'. That was the third answer refused; nothing was saved.",
      hint: 'Run `zot config init` again, or set ZOTERO_LIBRARY_ID in the environment instead.',
    });
    expect(r.lines.filter((l) => l.startsWith('Library id'))).toHaveLength(3);
    expect(r.lines.filter((l) => l.endsWith('Try again, or press Enter to leave it unset.'))).toHaveLength(2);
    expect(existsSync(configFile)).toBe(false);
  });

  it('refuses a group without an id at the type question, and asks it again', async () => {
    const r = await wizard(['', 'group', 'user', '', '', '']);
    expect(r.code).toBe(0);
    expect(r.lines).toContain(
      'A group library needs its id, and no library id was given: answer user, or start again with the group id. Try again, or press Enter to keep the value in brackets.',
    );
    expect(savedProfile()).toMatchObject({ library_type: 'user' });
    expect(savedProfile()).not.toHaveProperty('library_id');
  });
});

describe('zot config init shows the defaults', () => {
  it("shows the profile's values and the environment's (which override them), masks the key, and Enter keeps them", async () => {
    mkdirSync(box.env.ZOT_CONFIG_DIR as string, { recursive: true });
    writeFileSync(
      configFile,
      JSON.stringify({
        default_profile: 'default',
        profiles: {
          default: { library_id: '111', library_type: 'user', api_key: OTHER_KEY, data_dir: '/srv/zoteus' },
        },
      }),
    );
    const env = { ...box.env, ZOTERO_LIBRARY_ID: '999', ZOTERO_API_URL: 'https://zotero.example.org/api' };
    const r = await wizard(['', '', '', '', ''], env);
    expect(r.code).toBe(0);
    expect(r.lines).toEqual([
      `Profile 'default' in ${configFile}. Enter keeps the value in brackets.`,
      'Library id (your userID, or a group id) [999, from the environment]: ',
      'Library type (user or group) [user]: ',
      'Web API URL [https://zotero.example.org/api, from the environment]: ',
      'API key (https://www.zotero.org/settings/keys) [********]: ',
      `Zotero data directory [${box.env.ZOTERO_DATA_DIR}, from the environment]: `,
      `Saved to ${configFile}. Try: zot whoami`,
    ]);
    expect(r.stderr).not.toContain(OTHER_KEY);
    expect(savedProfile()).toEqual({
      library_id: '999',
      library_type: 'user',
      api_url: 'https://zotero.example.org/api',
      api_key: OTHER_KEY,
      zotero_data_dir: box.env.ZOTERO_DATA_DIR,
      // Not asked, so left as it was.
      data_dir: '/srv/zoteus',
    });
  });

  it('shows the built-in defaults too, but writes only what the person gave', async () => {
    const env = { ...box.env, ZOTERO_API_URL: undefined, ZOTERO_DATA_DIR: undefined };
    const r = await wizard(['', '', '', '', ''], env);
    expect(r.code).toBe(0);
    expect(r.lines.slice(1, 6)).toEqual([
      'Library id (your userID, or a group id): ',
      'Library type (user or group) [user]: ',
      'Web API URL [https://api.zotero.org]: ',
      'API key (https://www.zotero.org/settings/keys): ',
      `Zotero data directory [${join(box.dir, 'Zotero')}]: `,
    ]);
    expect(savedProfile()).toEqual({ library_type: 'user' });
  });
});
