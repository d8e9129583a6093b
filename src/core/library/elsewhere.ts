/**
 * Where else a key is. When the addressed library has no item of a key, the other libraries
 * this installation reads from the desktop's `zotero.sqlite` may hold it (the key of a group's
 * item read in the personal library, say): one indexed query per library of the local
 * database, never a request to the cloud. Each library comes with the arguments that address
 * it, so a message can say how to read the item there.
 */
import type { Deps } from '../tool.js';
import { libraryPrefix, resolveLibrary, type LibraryArgs } from './address.js';
import { desktop, type DesktopLibrary } from './readers/desktop.js';
import { planRoute, type RoutePlan } from './router.js';

/** A library on this computer that holds a key. */
export interface HeldElsewhere {
  key: string;
  /** `groups/4711`, `users/8675309`: as a read there names its library. */
  library: string;
  /** "group 4711 (Ocean Lab)", "My Library (users/8675309)". */
  label: string;
  /** The library arguments that address it; `default: true` when it is the default library. */
  address: LibraryArgs & { default?: true };
}

/**
 * The libraries of the desktop's `zotero.sqlite`, other than `addressed`, that hold an item of
 * each key, in the order of `keys`; only those a call can address (a personal library whose
 * account is not known and is not the default library cannot be). Nothing when the desktop is
 * not used (ZOTEUS_LOCAL=off) or its database is not available.
 */
export async function keysElsewhere(
  deps: Deps,
  keys: readonly string[],
  addressed: string | undefined,
): Promise<HeldElsewhere[]> {
  if (deps.config.local === 'off' || keys.length === 0) return [];
  const d = await desktop(deps);
  const sqlite = (await d.state()).sqlite.reader;
  if (!sqlite) return [];
  const holders = await sqlite.librariesOfKeys(keys);
  if (holders.size === 0) return [];
  const libraries = await d.libraries();
  let defaultPlan: Promise<RoutePlan | undefined> | undefined;
  const byDefault = () =>
    (defaultPlan ??= planRoute(deps, resolveLibrary({}, deps.config)).catch(() => undefined));

  const addresses = new Map<number, Omit<HeldElsewhere, 'key'> | undefined>();
  const addressOf = async (lib: DesktopLibrary): Promise<Omit<HeldElsewhere, 'key'> | undefined> => {
    const plan = await byDefault();
    if (plan?.local && plan.local.libraryID === lib.libraryID && plan.local.type === lib.type) {
      return {
        library: plan.library,
        label: lib.type === 'group' ? `group ${lib.id} (${lib.name})` : `${lib.name} (${plan.library})`,
        address: { default: true },
      };
    }
    if (lib.type === 'group') {
      return {
        library: libraryPrefix({ type: 'group', id: lib.id }),
        label: `group ${lib.id} (${lib.name})`,
        address: { library_id: lib.id },
      };
    }
    // The personal library, when it is not the default one: addressed by its account's id.
    const account = await d.account();
    if (account === undefined || account <= 0) return undefined;
    const library = libraryPrefix({ type: 'user', id: account });
    return {
      library,
      label: `${lib.name} (${library})`,
      address: { library_type: 'user', library_id: account },
    };
  };

  const found: HeldElsewhere[] = [];
  for (const key of new Set(keys)) {
    for (const libraryID of holders.get(key) ?? []) {
      if (!addresses.has(libraryID)) {
        const lib = libraries.find((l) => l.libraryID === libraryID);
        addresses.set(libraryID, lib ? await addressOf(lib) : undefined);
      }
      const where = addresses.get(libraryID);
      if (where && where.library !== addressed) found.push({ key, ...where });
    }
  }
  return found;
}
