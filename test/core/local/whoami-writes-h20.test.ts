/**
 * whoami with no Web API key: writes go nowhere yet, and it says why (no ZOTERO_API_KEY, and
 * the desktop has no authorised key or cannot take writes), never "writes go to the cloud".
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LocalWritesConfig } from '../../support/zotero-server/local-writes.js';
import { tools } from '../../../src/tools/index.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { ALICE, startWorld, type World } from '../library/world.js';

const LOCAL_KEY = 'L0calK3yAbCdEf1234567890abcdefgh';

let world: World;
let localUrl: string;
let writes: LocalWritesConfig;

beforeAll(async () => {
  world = await startWorld();
  localUrl = world.server.serveLocalApi({ userID: ALICE, groups: [10] });
  writes = world.server.serveLocalWrites();
});
afterAll(() => world.close());
beforeEach(() => {
  writes.keys.clear();
  world.server.clearLog();
});

type Writes = { to: string | null; reason: string };

function noKeys(extra: Record<string, string | undefined> = {}): Record<string, string> {
  return world.env({ ZOTERO_API_KEY: undefined, ZOTEUS_LOCAL_API_URL: localUrl, ...extra });
}

async function whoami(env: Record<string, string>): Promise<{ writes: Writes[]; summary: string }> {
  const json = await zotAt(['whoami', '--json'], { env });
  const data = json.json().data as { libraries: Array<{ writes?: Writes }> };
  const text = await zotAt(['whoami'], { env, stdoutTTY: true });
  return { writes: data.libraries.map((l) => l.writes as Writes), summary: text.stdout };
}

const NOWHERE = 'Writes cannot go anywhere yet: no ZOTERO_API_KEY is set for the Web API, and';

describe('whoami without a Web API key', () => {
  it('a writable desktop and no local key: nowhere yet, and a person runs zot auth local', async () => {
    const { writes: libs, summary } = await whoami(noKeys());
    expect(libs.map((w) => w.to)).toEqual([null, null]);
    expect(libs[0]?.reason).toBe(
      `${NOWHERE} no local API key is configured for the desktop app, which takes writes (Zotero 10+) once a person authorises Zoteus. Have a person authorise Zoteus in the Zotero desktop app once: run \`zot auth local\` at a terminal and click "Always Allow" (a one-time key cannot do a write of several requests); agents then get the key from ZOTEUS_LOCAL_API_KEY.`,
    );
    expect(summary.split('\n')[0]).toMatch(/; writes cannot go anywhere yet \(writes\.reason says why\)\.$/);
    expect(summary).not.toContain('writes go to the cloud');
    // Nothing was written, and no key was sent anywhere.
    expect(world.server.log.filter((e) => e.headers['zotero-api-key'] !== undefined)).toEqual([]);
  });

  it('the desktop not running: nowhere yet, why, and that it needs a key too', async () => {
    const { writes: libs, summary } = await whoami(
      noKeys({ ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api' }),
    );
    expect(libs[0]?.to).toBeNull();
    expect(libs[0]?.reason).toBe(
      `${NOWHERE} the desktop app cannot take them. The Zotero desktop app is not running (nothing answers at http://127.0.0.1:9/api). Start Zotero 10 or later with its local API enabled to write through it. Then it also needs a key. Have a person authorise Zoteus in the Zotero desktop app once: run \`zot auth local\` at a terminal and click "Always Allow" (a one-time key cannot do a write of several requests); agents then get the key from ZOTEUS_LOCAL_API_KEY.`,
    );
    expect(summary).not.toContain('writes go to the cloud');
  });

  it('a local key but the local API off: nowhere yet, with where to turn it on, no authorising', async () => {
    world.server.setLocalApiEnabled(false);
    try {
      const { writes: libs } = await whoami(noKeys({ ZOTEUS_LOCAL_API_KEY: LOCAL_KEY }));
      expect(libs[0]?.to).toBeNull();
      expect(libs[0]?.reason).toMatch(
        new RegExp(
          `^${NOWHERE} the desktop app cannot take them\\. Zotero is running, but its local API is disabled \\(HTTP 403 at .*\\)\\. In Zotero 7 or later, open Settings → Advanced`,
        ),
      );
      expect(libs[0]?.reason).not.toContain('auth local');
    } finally {
      world.server.setLocalApiEnabled(true);
    }
  });

  it('ZOTEUS_WRITES=cloud: nowhere yet, since the Web API has no key', async () => {
    const { writes: libs } = await whoami(noKeys({ ZOTEUS_WRITES: 'cloud' }));
    expect(libs[0]).toEqual({
      to: null,
      reason:
        'Writes cannot go anywhere yet: ZOTEUS_WRITES=cloud sends them to the Web API, and no ZOTERO_API_KEY is set.',
    });
  });

  it('a Web API key: still the cloud (unchanged)', async () => {
    const { writes: libs, summary } = await whoami(noKeys({ ZOTERO_API_KEY: 'Zk3yS3cr3tAbCdEf12345678' }));
    expect(libs[0]?.to).toBe('cloud');
    expect(summary).toContain('; writes go to the cloud');
  });

  it('on MCP: the same, in MCP words (no zot command)', async () => {
    const env = noKeys();
    const mcp = await connect(tools, { ...env });
    try {
      const result = await mcp.client.callTool({ name: 'zotero_whoami', arguments: {} });
      const out = result.structuredContent as { libraries: Array<{ writes?: Writes }> };
      const reason = out.libraries[0]?.writes?.reason ?? '';
      expect(out.libraries[0]?.writes?.to).toBeNull();
      expect(reason).toContain(NOWHERE);
      expect(reason).toContain('they run the auth local command of the Zoteus CLI at a terminal');
      expect(reason).not.toContain('zot auth local');
    } finally {
      await mcp.close();
    }
  });
});
