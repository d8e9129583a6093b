/** What both saved-search tools show: a saved search's definition. */
import * as z from 'zod';

export const conditionRow = z.object({
  condition: z
    .string()
    .describe(
      'Zotero’s condition name: a field (title, DOI, …), tag, creator, collection, itemType, joinMode, ….',
    ),
  operator: z
    .string()
    .describe(
      'is, isNot, contains, doesNotContain, beginsWith, isBefore, isAfter, isInTheLast, true, false, any, all, ….',
    ),
  value: z.string().describe('What the condition compares with ("" for conditions that take none).'),
});

export const searchRow = z.object({
  key: z.string().describe('8-character saved-search key.'),
  version: z.number().describe('The saved search’s version.'),
  name: z.string(),
  conditions: z
    .array(conditionRow)
    .describe(
      'The conditions, in order; a joinMode condition says whether all (the default) or any must match.',
    ),
  deleted: z.literal(true).optional().describe('In the trash (trashed saved searches are still listed).'),
});

/** One line per condition: `condition operator value`. */
export function conditionsText(conditions: ReadonlyArray<z.infer<typeof conditionRow>>): string[] {
  return conditions.map((c) => `  ${[c.condition, c.operator, c.value].filter((p) => p !== '').join(' ')}`);
}
