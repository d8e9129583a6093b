/**
 * The world of the retraction tests: a desktop zotero.sqlite (no API key: the router reads it)
 * holding items with DOIs, the loopback metadata services, Zotero's own `retractedItems` rows,
 * and `zot` run in-process with a clock whose sleeps cost nothing.
 */
import { join } from 'node:path';
import { loadDatabaseClass } from '../../../src/core/sqlite-driver.js';
import { sandbox } from '../../support/cli.js';
import { fakeClock, type FakeClock } from '../../support/metadata-services/clock.js';
import { startMetadataFakes, type MetadataFakes } from '../../support/metadata-services/index.js';
import { buildZoteroDb, type CollectionSpec, type ItemSpec } from '../../support/zotero-sqlite/index.js';
import { zotAt, type TerminalRun } from '../../surfaces/cli/terminal-harness.js';

const NOWHERE = 'http://127.0.0.1:9';

export interface RetractionWorld {
  fakes: MetadataFakes;
  dataDir: string;
  /** item key → itemID in the database. */
  ids: Map<string, number>;
  env(extra?: Record<string, string | undefined>): Record<string, string | undefined>;
  /** `zot …` in-process; each run gets a fresh fake clock unless one is given. */
  zot(
    args: string[],
    o?: { env?: Record<string, string | undefined>; clock?: FakeClock },
  ): Promise<TerminalRun>;
  /** Flags an item as Zotero's retraction feed does. */
  flagInZotero(key: string, data: Record<string, unknown>, flag?: number): void;
  close(): Promise<void>;
}

export async function startRetractionWorld(
  items: ItemSpec[],
  collections: CollectionSpec[] = [],
): Promise<RetractionWorld> {
  const fakes = await startMetadataFakes();
  const box = sandbox();
  const dataDir = box.env.ZOTERO_DATA_DIR as string;
  const path = join(dataDir, 'zotero.sqlite');
  const built = await buildZoteroDb(path, {
    user: { userID: 7, username: 'tester' },
    libraries: [{ type: 'user', items, collections }],
  });
  const ids = new Map(built.items.map((i) => [i.key, i.itemID]));
  const env = (extra: Record<string, string | undefined> = {}) => ({
    ...box.env,
    ...fakes.env(),
    ZOTERO_API_URL: NOWHERE,
    ZOTEUS_LOCAL_API_URL: NOWHERE,
    ZOTEUS_CROSSREF_MAILTO: 'tests@example.org',
    ...extra,
  });
  return {
    fakes,
    dataDir,
    ids,
    env,
    zot: (args, o = {}) => zotAt(args, { env: env(o.env), clock: o.clock ?? fakeClock() }),
    flagInZotero(key, data, flag = 0) {
      const Database = loadDatabaseClass();
      const db = new Database(path);
      try {
        db.prepare('INSERT OR REPLACE INTO retractedItems (itemID, data, flag) VALUES (?, ?, ?)').run(
          ids.get(key),
          JSON.stringify(data),
          flag,
        );
      } finally {
        db.close();
      }
    },
    close: async () => {
      await fakes.close();
      box.cleanup();
    },
  };
}

/** A cache folder of its own, so a test starts with nothing cached. */
export function freshCache(world: RetractionWorld, name: string): Record<string, string> {
  return { ZOT_CACHE_DIR: join(world.dataDir, '..', `cache-${name}`) };
}
