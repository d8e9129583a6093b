/**
 * Previewed plans of a destructive batch (a metadata rewrite, an enrichment): what each item
 * would become and the item version the preview saw, kept as a JSON file for a day so that
 * "apply exactly the plan I looked at" is possible a call later. Applying compares each
 * item's version with the one stored here; an item edited since is a conflict, untouched.
 *
 * Plans live in the data directory (`plans/`), or under the caller's own folder on a shared
 * deployment, or, when the deployment has a state database (`Deps.sharedState`), in its
 * `plans` table as the caller's rows (plans-sql.ts), so a plan previewed on one replica
 * applies on another. Either way one caller can never apply another's plan. A plan is bound to
 * its kind and its library: an id from another kind or library is refused as unknown.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDir } from '../dirs.js';
import { ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';

/** Where a caller's plans are kept: one interface, a folder of files or the state database. */
export interface PlanStore {
  /** Stores a plan and returns it with its new id (plans older than a day are pruned first). */
  save<T>(kind: string, library: string, body: T, now?: number): Promise<StoredPlan<T>>;
  /** The plan `id` of this kind and library, or a `validation_error` saying why there is none. */
  load<T>(kind: string, library: string, id: string, now?: number): Promise<StoredPlan<T>>;
  /** Deletes plans older than a day; how many. */
  prune(now?: number): Promise<number>;
}

/** This call's caller's plans: the state database's rows when there is one, else the folder. */
export async function openPlanStore(
  deps: Pick<Deps, 'config' | 'fileRoot' | 'sharedState'>,
): Promise<PlanStore> {
  if (deps.sharedState) {
    const { sqlPlanStore } = await import('./plans-sql.js');
    return sqlPlanStore(deps.sharedState.db, deps.sharedState.owner);
  }
  return filePlanStore(planDir(deps));
}

/** The plans of one folder (the files of savePlan and loadPlan). */
export function filePlanStore(dir: string): PlanStore {
  return {
    save: async (kind, library, body, now) => savePlan(dir, kind, library, body, now),
    load: async (kind, library, id, now) => loadPlan(dir, kind, library, id, now),
    prune: async (now) => prunePlans(dir, now),
  };
}

export const PLAN_TTL_MS = 24 * 60 * 60 * 1000;
export const PLAN_ID = /^p_[a-z2-7]{16}$/;

export interface StoredPlan<T> {
  id: string;
  kind: string;
  library: string;
  createdAt: string;
  expiresAt: string;
  body: T;
}

/** The folder plans are kept in for this call's caller. */
export function planDir(deps: Pick<Deps, 'config' | 'fileRoot'>): string {
  return join(deps.fileRoot ?? deps.config.dataDir, 'plans');
}

export function newPlanId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(16);
  let id = 'p_';
  for (const b of bytes) id += alphabet[b & 31];
  return id;
}

/** Stores a plan (atomically, readable only by its owner) and returns it with its new id. */
export function savePlan<T>(
  dir: string,
  kind: string,
  library: string,
  body: T,
  now: number = Date.now(),
): StoredPlan<T> {
  ensureDir(dir);
  prunePlans(dir, now);
  const plan: StoredPlan<T> = {
    id: newPlanId(),
    kind,
    library,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + PLAN_TTL_MS).toISOString(),
    body,
  };
  const target = join(dir, `${plan.id}.json`);
  const temporary = join(dir, `.${plan.id}.tmp`);
  writeFileSync(temporary, JSON.stringify(plan), { mode: 0o600 });
  renameSync(temporary, target);
  return plan;
}

/**
 * The plan `id` of this kind and library; a `validation_error` in the user's terms when there
 * is none (mistyped, expired, made for another library or by another kind of preview).
 */
export function loadPlan<T>(
  dir: string,
  kind: string,
  library: string,
  id: string,
  now: number = Date.now(),
): StoredPlan<T> {
  const unknown = (why: string) => unknownPlan(id, why);
  if (!PLAN_ID.test(id)) throw unknown('a plan id looks like p_ and 16 letters or digits');
  let plan: StoredPlan<T>;
  try {
    plan = JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8')) as StoredPlan<T>;
  } catch {
    throw unknown('there is no such plan, or it has expired');
  }
  return checkPlan(plan, kind, library, id, now);
}

/** The refusal of a plan id there is no plan for, with why. */
export function unknownPlan(id: string, why: string): ZoteusError {
  return new ZoteusError('validation_error', `No plan ${JSON.stringify(id)} to apply: ${why}.`, {
    field: 'plan_id',
    hint: 'Preview again (without apply) for a new plan id; plans are kept for 24 hours.',
  });
}

/**
 * What a stored plan is checked for once found, the same in every store: its kind, its
 * library, its expiry.
 */
export function checkPlan<T>(
  plan: StoredPlan<T>,
  kind: string,
  library: string,
  id: string,
  now: number,
): StoredPlan<T> {
  if (plan.kind !== kind) throw unknownPlan(id, `it is a plan of another preview (${plan.kind})`);
  if (plan.library !== library) throw unknownPlan(id, `it was made for the library ${plan.library}`);
  if (Date.parse(plan.expiresAt) <= now) throw unknownPlan(id, `it expired at ${plan.expiresAt}`);
  return plan;
}

/** Deletes plans older than a day; a folder that cannot be read is left as it is. */
export function prunePlans(dir: string, now: number = Date.now()): number {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!/^(p_[a-z2-7]{16}\.json|\.p_[a-z2-7]{16}\.tmp)$/.test(name)) continue;
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs > PLAN_TTL_MS) {
        unlinkSync(path);
        removed++;
      }
    } catch {
      // Raced with another process: fine.
    }
  }
  return removed;
}
