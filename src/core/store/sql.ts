/**
 * One small asynchronous SQL client over the two databases Zoteus keeps its state in: the
 * embedded SQLite file of one machine, and PostgreSQL for a shared deployment's replicas
 * (architecture.md, "One machine, or a shared deployment"). A store written on it runs on
 * both, so one test suite holds both to the same semantics.
 *
 * The SQL a store writes is the portable subset: `?` placeholders (numbered `$n` for
 * PostgreSQL here), `INSERT … ON CONFLICT … DO UPDATE/NOTHING`, BIGINT/TEXT/INTEGER columns,
 * no JSON functions. A row lock (`SELECT … FOR UPDATE`) is kept for PostgreSQL and dropped for
 * SQLite, whose transactions here begin IMMEDIATE and so already hold the write lock.
 */
import { ZoteusError } from '../errors.js';
import { openOwnDatabase, whyUnusable } from '../sqlite-driver.js';

export type Dialect = 'sqlite' | 'postgres';

export interface SqlClient {
  readonly dialect: Dialect;
  /** Rows of a statement that returns rows. */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** A statement that changes rows: how many it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }>;
  /** `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** `?` → `$1, $2, …` outside quoted strings and identifiers. */
export function numberedPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let quote: string | undefined;
  for (const ch of sql) {
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') {
      out += `$${++n}`;
    } else out += ch;
  }
  return out;
}

const ROW_LOCK = /\s+FOR\s+UPDATE\b/gi;

/**
 * SQLite through better-sqlite3, which is synchronous: the client serialises its work, so a
 * transaction spanning awaits never interleaves with another call on the same connection.
 */
export function openSqliteClient(path: string): SqlClient {
  let db: ReturnType<typeof openOwnDatabase>;
  try {
    db = openOwnDatabase(path, () => {});
  } catch (error) {
    throw unusableDatabase(path, error);
  }
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T> | T): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const statement = (sql: string) => db.prepare(sql.replace(ROW_LOCK, ''));
  const direct: SqlClient = {
    dialect: 'sqlite',
    query: async <T>(sql: string, params: readonly unknown[] = []) =>
      statement(sql).all(...(params as unknown[])) as T[],
    run: async (sql, params = []) => ({ changes: statement(sql).run(...(params as unknown[])).changes }),
    transaction: (work) => work(direct),
    close: async () => {},
  };
  return {
    dialect: 'sqlite',
    query: (sql, params) => serial(() => direct.query(sql, params)),
    run: (sql, params) => serial(() => direct.run(sql, params)),
    transaction: (work) =>
      serial(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = await work(direct);
          db.exec('COMMIT');
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      }),
    close: () =>
      serial(() => {
        db.close();
      }),
  };
}

interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/** PostgreSQL through a `pg` pool (loaded on first use: a single machine never needs it). */
export async function openPostgresClient(
  url: string,
  options: { max?: number; applicationName?: string } = {},
): Promise<SqlClient> {
  const pg = (await import('pg')).default;
  // BIGINT columns hold milliseconds and counts, well inside a double: numbers, as SQLite answers.
  const types = {
    getTypeParser: (oid: number, format?: string) =>
      oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as never),
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'zoteus',
    types,
  });
  // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const over = (client: Queryable): Omit<SqlClient, 'transaction' | 'close'> => ({
    dialect: 'postgres',
    query: async <T>(sql: string, params: readonly unknown[] = []) =>
      (await client.query(numberedPlaceholders(sql), params as unknown[])).rows as T[],
    run: async (sql, params = []) => ({
      changes: (await client.query(numberedPlaceholders(sql), params as unknown[])).rowCount ?? 0,
    }),
  });
  return {
    ...over(pool),
    async transaction(work) {
      const connection = await pool.connect();
      const tx: SqlClient = {
        ...over(connection),
        transaction: (inner) => inner(tx),
        close: async () => {},
      };
      try {
        await connection.query('BEGIN');
        const result = await work(tx);
        await connection.query('COMMIT');
        return result;
      } catch (error) {
        await connection.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        connection.release();
      }
    },
    close: () => pool.end(),
  };
}

/** A state database that cannot be opened: named, with the way out, never a bug. */
export function unusableDatabase(where: string, error: unknown): ZoteusError {
  return new ZoteusError(
    'validation_error',
    `The database ${where} cannot be used (${whyUnusable(error)}).`,
    {
      retryable: false,
      hint: 'Check the path and its permissions, or point the setting at another place.',
    },
  );
}
