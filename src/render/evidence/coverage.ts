/** The coverage summary: counted from the rows, never taken from the caller. */
import { plural } from '../../core/words.js';
import type { CoverageCounts, EvidenceRow } from './types.js';

export function countCoverage(rows: readonly EvidenceRow[]): CoverageCounts {
  const counts: CoverageCounts = { passage: 0, abstractOnly: 0, unavailable: 0 };
  for (const row of rows) {
    if (row.coverage === 'passage') counts.passage += 1;
    else if (row.coverage === 'abstract-only') counts.abstractOnly += 1;
    else counts.unavailable += 1;
  }
  return counts;
}

/**
 * The one-line summary that ends the Markdown table and starts the MCP result's text, e.g.
 * `Coverage: 2 of 4 rows rest on a retrieved passage, 1 on the abstract only, 1 on no
 * retrieved text. 1 row contradicts its own evidence; 3 warnings.`
 */
export function coverageLine(
  coverage: CoverageCounts,
  rowCount: number,
  contradictingRows: number,
  warningCount: number,
): string {
  return (
    `Coverage: ${coverage.passage} of ${plural(rowCount, 'row', 'rows')} ${
      rowCount === 1 ? 'rests' : 'rest'
    } on a retrieved passage, ${coverage.abstractOnly} on the abstract only, ${coverage.unavailable} on no retrieved text. ` +
    `${plural(contradictingRows, 'row contradicts', 'rows contradict')} ${
      contradictingRows === 1 ? 'its' : 'their'
    } own evidence; ${plural(warningCount, 'warning', 'warnings')}.`
  );
}
