/**
 * Plans awaiting apply, the same from every store: the folder of one machine (or of one
 * caller), and the state database of a shared deployment on PostgreSQL and on SQLite through
 * the same SQL, where each owner's plans are their own and a plan made through one connection
 * (one replica) is applied through another.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ZoteusError } from '../../../src/core/errors.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { plansMigration, sqlPlanStore } from '../../../src/core/store/plans-sql.js';
import {
  filePlanStore,
  openPlanStore,
  PLAN_TTL_MS,
  prunePlans,
  savePlan,
  type PlanStore,
} from '../../../src/core/store/plans.js';
import { openPostgresClient, openSqliteClient, type SqlClient } from '../../../src/core/store/sql.js';
import { STATE_MIGRATIONS } from '../../../src/core/store/state.js';
import { postgresUrl } from '../../support/postgres.js';

const root = mkdtempSync(join(tmpdir(), 'zt-plans-'));
const clients: SqlClient[] = [];
afterAll(async () => {
  for (const c of clients) await c.close();
  rmSync(root, { recursive: true, force: true });
});

function dir(): string {
  return join(mkdtempSync(join(root, 'f-')), 'plans');
}

async function refusal(fn: () => Promise<unknown>): Promise<ZoteusError> {
  try {
    await fn();
  } catch (error) {
    return error as ZoteusError;
  }
  throw new Error('expected a refusal');
}

/** Two views of one store (two replicas, or one folder twice), for owner `a` and owner `b`. */
type World = { a: PlanStore; aElsewhere: PlanStore; b: PlanStore; shared: boolean };

/** `database` names one database (a fresh one per test); `connect` opens a client of it. */
function sqlWorld(
  database: () => Promise<string>,
  connect: (where: string) => Promise<SqlClient>,
): () => Promise<World> {
  return async () => {
    const where = await database();
    const one = await connect(where);
    const two = await connect(where);
    clients.push(one, two);
    await migrate(one, [plansMigration]);
    return {
      a: sqlPlanStore(one, 'tenant:a'),
      aElsewhere: sqlPlanStore(two, 'tenant:a'),
      b: sqlPlanStore(two, 'tenant:b'),
      shared: true,
    };
  };
}

const engines: [string, () => Promise<World>][] = [
  [
    'a folder',
    async () => {
      const a = dir();
      return { a: filePlanStore(a), aElsewhere: filePlanStore(a), b: filePlanStore(dir()), shared: false };
    },
  ],
  ['PostgreSQL', sqlWorld(postgresUrl, async (url) => openPostgresClient(url, { max: 2 }))],
  [
    'SQLite through sql.ts',
    sqlWorld(
      async () => join(mkdtempSync(join(root, 's-')), 'state.db'),
      async (file) => openSqliteClient(file),
    ),
  ],
];

describe.each(engines)('plans in %s', (_name, world) => {
  it('stores a plan and loads it by id, from another replica too', async () => {
    const { a, aElsewhere } = await world();
    const plan = await a.save(
      'update-status',
      'users/1',
      { items: [{ key: 'ABCD2345', version: 7 }] },
      1_000,
    );
    expect(plan.id).toMatch(/^p_[a-z2-7]{16}$/);
    expect(plan.createdAt).toBe(new Date(1_000).toISOString());
    expect(plan.expiresAt).toBe(new Date(1_000 + PLAN_TTL_MS).toISOString());
    const loaded = await aElsewhere.load<{ items: unknown[] }>('update-status', 'users/1', plan.id, 2_000);
    expect(loaded).toEqual(plan);
  });

  it('refuses an id of another kind, another library, expired, mistyped, missing or of another owner', async () => {
    const { a, b } = await world();
    const plan = await a.save('update-status', 'users/1', {}, 1_000);
    const cases: [() => Promise<unknown>, string][] = [
      [() => a.load('enrich', 'users/1', plan.id, 2_000), 'it is a plan of another preview (update-status)'],
      [() => a.load('update-status', 'groups/5', plan.id, 2_000), 'it was made for the library users/1'],
      [
        () => a.load('update-status', 'users/1', plan.id, 1_000 + PLAN_TTL_MS),
        `it expired at ${plan.expiresAt}`,
      ],
      [
        () => a.load('update-status', 'users/1', '../../etc/passwd', 2_000),
        'a plan id looks like p_ and 16 letters or digits',
      ],
      [
        () => a.load('update-status', 'users/1', 'p_aaaaaaaaaaaaaaaa', 2_000),
        'there is no such plan, or it has expired',
      ],
      [() => b.load('update-status', 'users/1', plan.id, 2_000), 'there is no such plan, or it has expired'],
    ];
    for (const [fn, why] of cases) {
      const err = await refusal(fn);
      expect(err.code).toBe('validation_error');
      expect(err.field).toBe('plan_id');
      expect(err.message).toBe(`No plan ${JSON.stringify(err.message.split('"')[1])} to apply: ${why}.`);
    }
    // b's refusal left a's plan as it was.
    expect((await a.load('update-status', 'users/1', plan.id, 2_000)).id).toBe(plan.id);
  });

  it('an expired plan cannot be applied, and saving another prunes it from the database', async () => {
    const { a, shared } = await world();
    const now = Date.now();
    const old = await a.save('enrich', 'users/1', {}, now - PLAN_TTL_MS - 60_000);
    const fresh = await a.save('enrich', 'users/1', {}, now);
    const err = await refusal(() => a.load('enrich', 'users/1', old.id, now));
    // The folder prunes by the file's age (below), so its expired file is still there to say when.
    expect(err.message).toContain(
      shared ? 'there is no such plan, or it has expired' : `it expired at ${old.expiresAt}`,
    );
    expect((await a.load('enrich', 'users/1', fresh.id, now)).id).toBe(fresh.id);
    expect(await a.prune(now + PLAN_TTL_MS)).toBe(shared ? 1 : 0);
  });
});

describe('plans in a folder', () => {
  it('are files readable only by their owner; old ones pruned, other files left alone', () => {
    const d = dir();
    const old = savePlan(d, 'enrich', 'users/1', {});
    const fresh = savePlan(d, 'enrich', 'users/1', {});
    expect(statSync(join(d, `${fresh.id}.json`)).mode & 0o777).toBe(0o600);
    writeFileSync(join(d, 'notes.txt'), 'mine');
    const past = (Date.now() - PLAN_TTL_MS - 60_000) / 1000;
    utimesSync(join(d, `${old.id}.json`), past, past);
    expect(prunePlans(d)).toBe(1);
    expect(readdirSync(d).sort()).toEqual([`${fresh.id}.json`, 'notes.txt'].sort());
  });
});

describe('the plan store a call opens', () => {
  it('is the state database when the deployment has one, else the caller’s folder', async () => {
    const db = openSqliteClient(join(root, 'opened.db'));
    clients.push(db);
    await migrate(db, STATE_MIGRATIONS);
    const config = { dataDir: join(root, 'data') } as never;
    const viaDb = await openPlanStore({ config, sharedState: { db, owner: 'tenant:7' } });
    const plan = await viaDb.save('merge', 'users/7', { master: 'X' });
    expect(await db.query('SELECT owner, kind FROM plans WHERE id = ?', [plan.id])).toEqual([
      { owner: 'tenant:7', kind: 'merge' },
    ]);
    const fileRoot = join(root, 'callers', 'c1');
    const viaFolder = await openPlanStore({ config, fileRoot });
    const filed = await viaFolder.save('merge', 'users/7', {});
    expect(readdirSync(join(fileRoot, 'plans'))).toEqual([`${filed.id}.json`]);
  });
});
