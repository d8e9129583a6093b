/**
 * `zot server migrate` and `zot server rotate-keys`: the operator's commands of a shared
 * deployment (`zot server` itself runs it, as `zot mcp --http` does). Both work on the state
 * database the environment names (ZOTEUS_DATABASE_URL, else `<data dir>/server.db`) and are
 * safe to run while replicas serve: migrations take an advisory lock, and a key re-encrypted
 * is written only where the row still holds what was read.
 */
import type { Config } from '../../../core/config.js';
import { ZoteusError } from '../../../core/errors.js';
import { migrationStatus } from '../../../core/store/migrations.js';
import { SECRET_KEYS_VAR, secretKeysFromEnv } from '../../../core/tenants/secrets.js';
import { tenantStore } from '../../../core/tenants/store.js';
import { existsSync } from 'node:fs';
import { migrateState, openStateDatabase, STATE_MIGRATIONS, stateFile } from '../../../core/store/state.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Applies the missing migrations (with `dryRun`, only lists them). */
export async function serverMigrate(
  env: Env,
  config: Config,
  dryRun: boolean,
): Promise<Record<string, unknown>> {
  const file = stateFile(env, config);
  if (dryRun && file !== undefined && !existsSync(file)) {
    // A dry run creates nothing, not even the file.
    return { database: file, would_apply: STATE_MIGRATIONS.map((m) => m.id), applied: [] };
  }
  const state = await openStateDatabase(env, config);
  try {
    if (dryRun) {
      const status = await migrationStatus(state.db, STATE_MIGRATIONS);
      return { database: state.where, would_apply: status.pending, applied: status.applied };
    }
    const { applied, current } = await migrateState(state);
    return { database: state.where, applied, current };
  } finally {
    await state.db.close();
  }
}

/** Re-encrypts every tenant's Zotero key still under an older key of ZOTEUS_SECRET_KEYS. */
export async function serverRotateKeys(env: Env, config: Config): Promise<Record<string, unknown>> {
  const keys = secretKeysFromEnv(env);
  if (!keys) {
    throw new ZoteusError(
      'validation_error',
      `${SECRET_KEYS_VAR} is not set: there is nothing to rotate to.`,
      {
        field: SECRET_KEYS_VAR,
        hint: `Put the new key first in ${SECRET_KEYS_VAR} and keep the old ones after it, then run this again.`,
      },
    );
  }
  const state = await openStateDatabase(env, config);
  try {
    await migrateState(state);
    const { tenants, reencrypted } = await tenantStore(state.db, keys).rotateKeys();
    return {
      database: state.where,
      key_id: keys[0].id,
      tenants,
      reencrypted,
    };
  } finally {
    await state.db.close();
  }
}
