/**
 * Rows whose claims do not match their own evidence fields. Each warning names its row
 * (`Row N (KEY): `, N counted from 1) and the table still renders: a warning never drops
 * or rewrites a row.
 */
import { hasLocator, hasQuotation } from './cells.js';
import type { EvidenceRow } from './types.js';

/** `Row 3 (ABCD2345): ` */
export function rowPrefix(index: number, row: EvidenceRow): string {
  return `Row ${index + 1} (${row.item_key}): `;
}

/** The warnings of one row, in a fixed order. */
export function warningsOfRow(row: EvidenceRow, index: number): string[] {
  const prefix = rowPrefix(index, row);
  const quoted = hasQuotation(row);
  const out: string[] = [];
  if (hasLocator(row) && !quoted) {
    out.push(`${prefix}has a page locator but no quotation; a locator should point at quoted text.`);
  }
  if (row.coverage === 'passage' && !quoted) {
    out.push(
      `${prefix}coverage is "passage" but there is no quotation; a retrieved passage should be quoted verbatim.`,
    );
  }
  if (row.coverage === 'unavailable' && quoted) {
    out.push(
      `${prefix}has a quotation but coverage is "unavailable"; text that was not retrieved cannot be quoted.`,
    );
  }
  if (row.support !== 'unverified' && row.coverage !== 'passage') {
    out.push(
      `${prefix}support is "${row.support}" but coverage is "${row.coverage}"; only a retrieved passage can back a verdict, so mark it "unverified" or retrieve the passage.`,
    );
  }
  return out;
}
