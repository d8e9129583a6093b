/**
 * The one list of MCP prompts. The MCP surface iterates it; a prompt's text is built from
 * the tools the server exposes, so it names only tools that exist.
 */
import type { AnyPrompt } from '../core/prompt.js';
import cite from './cite.js';
import evidenceTable from './evidence-table.js';
import literatureReview from './literature-review.js';
import organize from './organize.js';

export const prompts: readonly AnyPrompt[] = [
  evidenceTable as unknown as AnyPrompt,
  cite as unknown as AnyPrompt,
  literatureReview as unknown as AnyPrompt,
  organize as unknown as AnyPrompt,
];
