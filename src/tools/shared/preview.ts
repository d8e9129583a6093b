/**
 * The tools that preview unless asked to apply (update-status, enrich, merge): a call without
 * `apply` is a read (read-only mode allows it, nobody confirms it, it needs no key); with `apply`
 * it has the tool's tier, and applying the same plan again changes nothing more.
 */
import type { Tier } from '../../core/tool.js';

export function previewUnlessApplied(tier: Exclude<Tier, 'read'>) {
  return {
    tier,
    callTier: (input: { apply?: boolean | undefined }): Tier => (input.apply === true ? tier : 'read'),
    idempotent: true,
    needsKey: (input: { apply?: boolean | undefined }) => input.apply === true,
  };
}
