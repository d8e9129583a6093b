/**
 * Progress where the person is (issue 16, point 5): stderr decides, not the format. A bar when
 * stderr is a terminal (even with stdout redirected to a file), erased when the work ends, in
 * success or failure; NDJSON events when stderr is not a terminal. A background index build a
 * search starts is announced once.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ZoteusError } from '../../../src/core/errors.js';
import { buildInProgress, indexFile } from '../../../src/core/search-index/store.js';
import type { AnyTool } from '../../../src/core/tool.js';
import { sandbox } from '../../support/cli.js';
import { SAMPLE_USER, startSample, type Sample } from '../../tools/items/read/setup.js';
import { manualClock, screen, zotAt } from './terminal-harness.js';

const ERASE = '\r\u001b[K';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Four steps of 300 ms, with a fifth event 100 ms after the second (inside the 250 ms throttle);
 * with --fail it throws where the last step would be.
 */
const work = {
  since: '0.1.0',
  openWorld: false,
  name: 'fixture_work',
  title: 'Fixture work',
  summary: 'Work in four steps (fixture).',
  description: 'Progress in steps; fails before the last with --fail.',
  tier: 'read',
  cli: [{ path: ['fixture', 'work'] }],
  input: z.object({ fail: z.boolean().optional().describe('Fail before the last step.') }).strict(),
  output: z.object({ steps: z.number() }),
  async run(input: { fail?: boolean }, deps: Parameters<AnyTool['run']>[1]) {
    deps.progress({ event: 'start', phase: 'work', done: 0, total: 4 });
    await deps.clock.sleep(300);
    deps.progress({ event: 'progress', phase: 'work', done: 1, total: 4 });
    await deps.clock.sleep(100);
    deps.progress({ event: 'progress', phase: 'work', done: 2, total: 4 });
    await deps.clock.sleep(300);
    deps.progress({ event: 'progress', phase: 'work', done: 3, total: 4 });
    if (input.fail) throw new ZoteusError('api_error', 'The server failed at step 4.');
    await deps.clock.sleep(300);
    deps.progress({ event: 'complete', phase: 'work', done: 4, total: 4 });
    return { steps: 4 };
  },
} as unknown as AnyTool;

const BAR_0 = '\r[                              ] 0/4 work';
const BAR_1 = '\r[########                      ] 1/4 work';
const BAR_3 = '\r[#######################       ] 3/4 work';

let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

const run = (args: string[], tty: { stdout?: boolean; stderr?: boolean }, extra = {}) =>
  zotAt(['fixture', 'work', ...args], {
    env: { ...box.env, ...extra },
    stdoutTTY: tty.stdout ?? false,
    stderrTTY: tty.stderr ?? false,
    extraTools: [work],
    clock: manualClock(),
  });

describe('progress is decided by stderr', () => {
  it('`zot … > out.json` at a terminal: a bar on stderr, erased when done; stdout is one JSON document', async () => {
    const r = await run([], { stderr: true });
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ ok: true, data: { steps: 4 } });
    // The event 100 ms after the last drawn one is left out; `complete` erases the bar.
    expect(r.stderr).toBe(`${BAR_0}${BAR_1}${BAR_3}${ERASE}`);
    expect(screen(r.stderr)).toEqual([]);
    expect(r.stderr).not.toContain('"event"');
  });

  it('stderr piped: NDJSON events, one JSON object a line, even when stdout is a terminal', async () => {
    const r = await run([], { stdout: true }, { NO_COLOR: '1' });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('steps  4\n');
    const lines = r.stderr.trimEnd().split('\n');
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const requestId = events[0]?.request_id;
    expect(requestId).toMatch(/^[0-9a-f]{12}$/);
    expect(events).toEqual([
      { event: 'start', phase: 'work', done: 0, total: 4, request_id: requestId, elapsed_ms: 0 },
      { event: 'progress', phase: 'work', done: 1, total: 4, request_id: requestId, elapsed_ms: 300 },
      { event: 'progress', phase: 'work', done: 3, total: 4, request_id: requestId, elapsed_ms: 700 },
      { event: 'complete', phase: 'work', done: 4, total: 4, request_id: requestId, elapsed_ms: 1000 },
    ]);
  });

  it('a failure erases the bar before the error: the screen keeps only the Error line', async () => {
    const r = await run(['--fail'], { stdout: true, stderr: true }, { NO_COLOR: '1' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${BAR_0}${BAR_1}${BAR_3}${ERASE}Error: The server failed at step 4.\n`);
    expect(screen(r.stderr)).toEqual(['Error: The server failed at step 4.']);
  });

  it('a failure with stdout piped: the bar is erased, and stdout is the error envelope alone', async () => {
    const r = await run(['--fail'], { stderr: true });
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ ok: false, error: { code: 'api_error' } });
    expect(r.stderr).toBe(`${BAR_0}${BAR_1}${BAR_3}${ERASE}`);
    expect(screen(r.stderr)).toEqual([]);
  });

  it('a bar is cut to the terminal width, so that \\r redraws all of it', async () => {
    const r = await zotAt(['fixture', 'work'], {
      env: box.env,
      stderrTTY: true,
      columns: 20,
      extraTools: [work],
      clock: manualClock(),
    });
    expect(r.stderr.split('\r').filter((l) => l !== '')).toEqual([
      '[                  ',
      '[########          ',
      '[##################',
      '\u001b[K',
    ]);
  });
});

describe('a background index build started by a search', () => {
  let sample: Sample;
  beforeEach(async () => {
    sample = await startSample();
  });
  afterEach(async () => {
    await builtInBackground();
    await sample.close();
  });

  /** Waits (bounded) for the detached build to finish and its process to exit. */
  async function builtInBackground(): Promise<boolean> {
    const path = indexFile(sample.env().ZOTEUS_DATA_DIR as string, SAMPLE_USER);
    let pid: number | undefined;
    for (let i = 0; i < 300; i++) {
      if (existsSync(`${path}.lock`)) pid = Number(readFileSync(`${path}.lock`, 'utf8')) || pid;
      if (existsSync(path) && !buildInProgress(path) && (pid === undefined || !alive(pid))) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  const search = (tty: { stdout?: boolean; stderr?: boolean }) =>
    zotAt(['search', 'sea level'], {
      // The build's process writes no code cache into the sandbox as it goes.
      env: sample.env({ ZOTEUS_INDEX_AUTO_MIN_ITEMS: '1', ZOTEUS_COMPILE_CACHE: 'off' }),
      stdoutTTY: tty.stdout ?? false,
      stderrTTY: tty.stderr ?? false,
    });
  const ANNOUNCEMENT = `Building the search index of ${SAMPLE_USER} in the background; later searches will be faster.`;

  it('at a terminal: one line on stderr; the next search, on the index built, says nothing', async () => {
    const first = await search({ stdout: true, stderr: true });
    expect(first.code).toBe(0);
    expect(first.stderr).toBe(`${ANNOUNCEMENT}\n`);
    expect(await builtInBackground()).toBe(true);
    const again = await search({ stdout: true, stderr: true });
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
  });

  it('in a pipe: one NDJSON event (background: true) on stderr; stdout is the envelope alone', async () => {
    const r = await search({});
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ ok: true });
    const events = r.stderr
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events).toEqual([
      {
        event: 'start',
        phase: 'index_build',
        background: true,
        message: ANNOUNCEMENT,
        request_id: expect.stringMatching(/^[0-9a-f]{12}$/),
        elapsed_ms: expect.any(Number),
      },
    ]);
  });
});
