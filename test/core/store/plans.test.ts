import { mkdtempSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPlan, PLAN_TTL_MS, prunePlans, savePlan } from '../../../src/core/store/plans.js';
import type { ZoteusError } from '../../../src/core/errors.js';

function dir(): string {
  return join(mkdtempSync(join(tmpdir(), 'zt-plans-')), 'plans');
}

function refusal(fn: () => unknown): ZoteusError {
  try {
    fn();
  } catch (error) {
    return error as ZoteusError;
  }
  throw new Error('expected a refusal');
}

describe('plans', () => {
  it('stores a plan readable only by its owner and loads it by id', () => {
    const d = dir();
    const plan = savePlan(d, 'update-status', 'users/1', { items: [{ key: 'ABCD2345', version: 7 }] }, 1_000);
    expect(plan.id).toMatch(/^p_[a-z2-7]{16}$/);
    expect(plan.expiresAt).toBe(new Date(1_000 + PLAN_TTL_MS).toISOString());
    expect(statSync(join(d, `${plan.id}.json`)).mode & 0o777).toBe(0o600);
    expect(readdirSync(d)).toEqual([`${plan.id}.json`]);
    const loaded = loadPlan<{ items: unknown[] }>(d, 'update-status', 'users/1', plan.id, 2_000);
    expect(loaded.body).toEqual({ items: [{ key: 'ABCD2345', version: 7 }] });
  });

  it('refuses an id of another kind, another library, expired, mistyped or missing', () => {
    const d = dir();
    const plan = savePlan(d, 'update-status', 'users/1', {}, 1_000);
    const cases: [() => unknown, string][] = [
      [
        () => loadPlan(d, 'enrich', 'users/1', plan.id, 2_000),
        'it is a plan of another preview (update-status)',
      ],
      [() => loadPlan(d, 'update-status', 'groups/5', plan.id, 2_000), 'it was made for the library users/1'],
      [
        () => loadPlan(d, 'update-status', 'users/1', plan.id, 1_000 + PLAN_TTL_MS),
        `it expired at ${plan.expiresAt}`,
      ],
      [() => loadPlan(d, 'update-status', 'users/1', '../../etc/passwd', 2_000), 'a plan id looks like'],
      [() => loadPlan(d, 'update-status', 'users/1', 'p_aaaaaaaaaaaaaaaa', 2_000), 'there is no such plan'],
    ];
    for (const [fn, why] of cases) {
      const err = refusal(fn);
      expect(err.code).toBe('validation_error');
      expect(err.field).toBe('plan_id');
      expect(err.message).toContain(why);
    }
  });

  it('prunes plans older than a day and leaves other files alone', () => {
    const d = dir();
    const old = savePlan(d, 'enrich', 'users/1', {});
    const fresh = savePlan(d, 'enrich', 'users/1', {});
    writeFileSync(join(d, 'notes.txt'), 'mine');
    const past = (Date.now() - PLAN_TTL_MS - 60_000) / 1000;
    utimesSync(join(d, `${old.id}.json`), past, past);
    expect(prunePlans(d)).toBe(1);
    expect(readdirSync(d).sort()).toEqual([`${fresh.id}.json`, 'notes.txt'].sort());
  });
});
