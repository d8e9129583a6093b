/**
 * What a person is asked before a destructive call (issue 16: the target by name, and the counts).
 * Names come from the desktop's data when the desktop holds the library, so nothing reaches the
 * cloud before the person answers; otherwise the declaration names its targets by key.
 */
import { resolveLibrary, type LibraryArgs } from '../library/address.js';
import type { LibraryReader } from '../library/port.js';
import type { AnyTool, Deps } from '../tool.js';

/** The library's reader on the desktop's data, or undefined when only the cloud holds it. */
async function desktopReader(deps: Deps, input: Record<string, unknown>): Promise<LibraryReader | undefined> {
  if (deps.config.local === 'off') return undefined;
  const { planRoute, openLibraryReader } = await import('../library/router.js');
  const args = input as LibraryArgs;
  const plan = await planRoute(deps, resolveLibrary(args, deps.config));
  if (plan.backend !== 'localApi' && plan.backend !== 'sqlite') return undefined;
  return (await openLibraryReader(deps, args)).reader;
}

/** The question: "`zot collection delete` will delete collection "Climate" (CLIMATE2) …. Proceed?" */
export async function confirmationQuestion(
  tool: AnyTool,
  label: string,
  input: Record<string, unknown>,
  deps: Deps,
): Promise<string> {
  if (!tool.confirmation) return `${label}: this is destructive. Proceed?`;
  let desktop: LibraryReader | undefined;
  try {
    desktop = 'library_id' in tool.input.shape ? await desktopReader(deps, input) : undefined;
  } catch {
    // The desktop's data is a courtesy here: unreadable, the question names keys instead.
    desktop = undefined;
  }
  let what: string;
  try {
    what = await tool.confirmation(input, desktop);
  } catch {
    what = await tool.confirmation(input, undefined);
  }
  return `${label} will ${what}. Proceed?`;
}
