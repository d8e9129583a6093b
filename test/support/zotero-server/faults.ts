/**
 * Fault injection. Each rule answers the next `times` matching requests (default 1), in the
 * order the rules were added. Answer-replacing faults (rateLimit, status, reset) are exclusive:
 * the first matching one wins. Decorating faults (slow, backoff, concurrentEdit) stack. A
 * `lock` rule is used only by a write that finds another write to its library in progress.
 */
import type { FaultInjector, FaultKind, Match, ZoteroTestServer } from './types.js';

/** Zotero's answer (409) to a write that finds its library locked by another write. */
export const LIBRARY_LOCKED = 'The library is currently locked. Please wait and try again.';

interface Rule {
  kind: FaultKind;
  remaining: number;
  match: Match | undefined;
  status?: number;
  body?: string;
  retryAfter?: number;
  seconds?: number;
  ms?: number;
  apply?: (server: ZoteroTestServer) => void;
}

/** What the faults do to one request. */
export interface FaultPlan {
  /** The answer-replacing fault, if any. */
  replace?: { kind: 'rateLimit' | 'status' | 'reset'; status: number; body?: string; retryAfter?: number };
  slowMs: number;
  backoff?: number;
  edits: Array<(server: ZoteroTestServer) => void>;
  /** For the log: the replacing fault, else the first decorating one. */
  kind?: FaultKind;
}

const REPLACING: ReadonlySet<FaultKind> = new Set(['rateLimit', 'status', 'reset']);

export class Faults implements FaultInjector {
  private rules: Rule[] = [];
  /** Read by the listings. */
  ignoringStart = false;

  rateLimit(o: { retryAfter?: number; times?: number; status?: 429 | 503; match?: Match }): void {
    this.add({ kind: 'rateLimit', status: o.status ?? 429, retryAfter: o.retryAfter }, o);
  }

  backoff(o: { seconds: number; times?: number; match?: Match }): void {
    this.add({ kind: 'backoff', seconds: o.seconds }, o);
  }

  reset(o: { times?: number; match?: Match } = {}): void {
    this.add({ kind: 'reset' }, o);
  }

  slow(o: { ms: number; times?: number; match?: Match }): void {
    this.add({ kind: 'slow', ms: o.ms }, o);
  }

  status(o: { status: number; body?: string; retryAfter?: number; times?: number; match?: Match }): void {
    this.add({ kind: 'status', status: o.status, body: o.body, retryAfter: o.retryAfter }, o);
  }

  concurrentEdit(o: { match?: Match; times?: number; apply: (server: ZoteroTestServer) => void }): void {
    this.add({ kind: 'concurrentEdit', apply: o.apply }, o);
  }

  lock(o: { times?: number; match?: Match } = {}): void {
    this.add({ kind: 'lock' }, o);
  }

  /**
   * Whether a write that arrives while another write to its library is in progress answers
   * 409 locked (uses up a `lock` rule), rather than being applied after it.
   */
  takeLock(method: string, target: string): boolean {
    const rule = this.rules.find(
      (r) => r.kind === 'lock' && r.remaining > 0 && matches(r.match, method, target),
    );
    if (!rule) return false;
    rule.remaining--;
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return true;
  }

  ignoreStart(on: boolean): void {
    this.ignoringStart = on;
  }

  clear(): void {
    this.rules = [];
    this.ignoringStart = false;
  }

  private add(rule: Omit<Rule, 'remaining' | 'match'>, o: { times?: number; match?: Match }): void {
    const times = o.times ?? 1;
    if (!(times >= 1)) throw new Error(`times must be at least 1, got ${times}`);
    this.rules.push({ ...rule, remaining: times, match: o.match });
  }

  /** Picks (and uses up) the faults for one request; `target` is the path plus query string. */
  take(method: string, target: string): FaultPlan {
    const plan: FaultPlan = { slowMs: 0, edits: [] };
    const matching = this.rules.filter(
      (r) => r.kind !== 'lock' && r.remaining > 0 && matches(r.match, method, target),
    );
    const replacing = matching.find((r) => REPLACING.has(r.kind));
    const used: Rule[] = [];
    if (replacing) {
      used.push(replacing);
      plan.replace = {
        kind: replacing.kind as 'rateLimit' | 'status' | 'reset',
        status: replacing.kind === 'reset' ? 0 : (replacing.status ?? 500),
        body: replacing.body,
        retryAfter: replacing.retryAfter,
      };
      plan.kind = replacing.kind;
    }
    for (const r of matching) {
      if (REPLACING.has(r.kind)) continue;
      // A request that is never handled cannot race with another client's write.
      if (r.kind === 'concurrentEdit' && replacing) continue;
      used.push(r);
      plan.kind ??= r.kind;
      if (r.kind === 'slow') plan.slowMs += r.ms ?? 0;
      if (r.kind === 'backoff') plan.backoff = r.seconds;
      if (r.kind === 'concurrentEdit' && r.apply) plan.edits.push(r.apply);
    }
    for (const r of used) r.remaining--;
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return plan;
  }
}

function matches(match: Match | undefined, method: string, target: string): boolean {
  if (!match) return true;
  if (match.method && match.method.toUpperCase() !== method.toUpperCase()) return false;
  if (match.path === undefined) return true;
  if (typeof match.path === 'string') return target.includes(match.path);
  match.path.lastIndex = 0; // a /g regex would otherwise alternate between hits and misses
  return match.path.test(target);
}
