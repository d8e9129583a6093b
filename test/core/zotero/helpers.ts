/**
 * Shared setup of the client tests: a real test server with one user and key, a client with
 * a fake clock (sleeps are recorded, not waited) and a captured request log.
 */
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import {
  createZoteroClient,
  type ZoteroClient,
  type ZoteroClientOptions,
} from '../../../src/core/zotero/index.js';
import { ZoteusError } from '../../../src/core/errors.js';

/** Looks like a real Zotero key (24 letters and digits): it must never leak anywhere. */
export const API_KEY = 'Zk3yS3cr3tAbCdEf12345678';
export const USER_ID = 1;
export const LIB = `users/${USER_ID}`;

export interface FakeClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  sleeps: number[];
}

/** Time moves only when the client sleeps, so Retry-After and Backoff are checked without waiting. */
export function fakeClock(start = 1_700_000_000_000): FakeClock {
  let time = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => time,
    sleep: async (ms) => {
      sleeps.push(ms);
      time += ms;
    },
  };
}

export interface Harness {
  server: ZoteroTestServer;
  client: ZoteroClient;
  clock: FakeClock;
  logLines: string[];
  makeClient(options?: Partial<ZoteroClientOptions>): ZoteroClient;
  close(): Promise<void>;
}

export async function setup(
  options: Partial<ZoteroClientOptions> = {},
  serverOptions = {},
): Promise<Harness> {
  const server = await startZoteroServer({ maxConcurrentLog: true, ...serverOptions });
  server.addUser({ userID: USER_ID, username: 'alice' });
  server.addKey({
    key: API_KEY,
    userID: USER_ID,
    access: {
      user: { library: true, write: true, files: true, notes: true },
      groups: { all: { library: true, write: true } },
    },
  });
  const clock = fakeClock();
  const logLines: string[] = [];
  const makeClient = (extra: Partial<ZoteroClientOptions> = {}): ZoteroClient =>
    createZoteroClient({
      apiUrl: `${server.url}/`,
      apiKey: API_KEY,
      clock,
      log: (line) => logLines.push(line),
      random: () => 0.5,
      ...options,
      ...extra,
    });
  return { server, client: makeClient(), clock, logLines, makeClient, close: () => server.close() };
}

/** The ZoteusError a promise rejects with (fails the test if it resolves). */
export async function caught(promise: Promise<unknown>): Promise<ZoteusError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ZoteusError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

/** Every text of an error a user or agent could see. */
export function errorTexts(error: ZoteusError): string {
  return [
    error.message,
    error.hint ?? '',
    JSON.stringify(error.toJSON()),
    String(error),
    error.stack ?? '',
  ].join('\n');
}
