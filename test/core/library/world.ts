/**
 * A small Zotero world on the test server for the library tests: two users, keys with
 * different powers, and groups with every kind of access, plus deps built the way the
 * surfaces build them (real config from an isolated environment).
 */
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';
import type { Clock, Deps } from '../../../src/core/tool.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { sandbox } from '../../support/cli.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';

/** Look like real Zotero keys (24 letters and digits): they must never leak anywhere. */
export const KEY = 'Zk3yS3cr3tAbCdEf12345678';
/** Reads its user library; reads group 20 only (no `all`). */
export const READ_KEY = 'Rd0nlyK3yAbCdEf123456789';
/** Not known to the server. */
export const BAD_KEY = 'Inval1dK3yAbCdEf12345678';

export const ALICE = 1;
export const BOB = 2;

export interface World {
  server: ZoteroTestServer;
  box: ReturnType<typeof sandbox>;
  /** The sandbox's environment pointed at the test server, with `KEY` unless overridden. */
  env(extra?: Record<string, string | undefined>): Record<string, string>;
  deps(options?: {
    env?: Record<string, string | undefined>;
    surface?: Deps['surface'];
    clock?: Clock;
    logs?: string[];
  }): Deps;
  /** `/keys/current` requests the server has seen. */
  keyChecks(): number;
  close(): Promise<void>;
}

export async function startWorld(): Promise<World> {
  const server = await startZoteroServer();
  server.addUser({ userID: ALICE, username: 'alice', displayName: 'Alice Liddell' });
  server.addUser({ userID: BOB, username: 'bob' });
  server.addKey({
    key: KEY,
    userID: ALICE,
    access: {
      user: { library: true, files: true, notes: true, write: true },
      groups: { all: { library: true, write: true } },
    },
  });
  server.addKey({
    key: READ_KEY,
    userID: ALICE,
    access: { user: { library: true }, groups: { '20': { library: true } } },
  });
  // 10: alice a member who may write; 20: alice a member; 30: only admins edit, alice a plain member;
  // 40: bob's alone; 50: only admins edit, alice an admin.
  server.addGroup({ id: 10, name: 'Lab', owner: BOB, members: [ALICE] });
  server.addGroup({ id: 20, name: 'Reading club', owner: BOB, members: [ALICE], type: 'PublicClosed' });
  server.addGroup({ id: 30, name: 'Archive', owner: BOB, members: [ALICE], libraryEditing: 'admins' });
  server.addGroup({ id: 40, name: 'Bob private', owner: BOB, members: [] });
  server.addGroup({
    id: 50,
    name: 'Curated',
    owner: BOB,
    members: [],
    admins: [ALICE],
    libraryEditing: 'admins',
  });
  server.library('groups/10').addItems([{ title: 'One' }, { title: 'Two' }]);

  const box = sandbox();
  const env = (extra: Record<string, string | undefined> = {}): Record<string, string> => {
    const all: Record<string, string | undefined> = {
      ...box.env,
      ZOTERO_API_URL: server.url,
      ZOTERO_API_KEY: KEY,
      ...extra,
    };
    for (const [name, value] of Object.entries(all)) if (value === undefined) delete all[name];
    return all as Record<string, string>;
  };
  return {
    server,
    box,
    env,
    deps: (options = {}) => {
      const e = env(options.env);
      const logs = options.logs;
      return createDeps({
        config: loadConfig(e),
        env: e,
        version: CLI_VERSION,
        surface: options.surface ?? 'mcp',
        ...(options.clock ? { clock: options.clock } : {}),
        ...(logs ? { writeLog: (line: string) => logs.push(line), debug: true } : {}),
      });
    },
    keyChecks: () => server.log.filter((entry) => entry.path === '/keys/current').length,
    close: async () => {
      await server.close();
      box.cleanup();
    },
  };
}

/** A clock that moves only when told; sleeps pass at once. */
export function movableClock(start = Date.now()): Clock & { advance(ms: number): void } {
  let time = start;
  return {
    now: () => time,
    sleep: async (ms) => {
      time += ms;
    },
    advance: (ms) => {
      time += ms;
    },
  };
}
