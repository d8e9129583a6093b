/** Light constants of the saved-search tools: the declarations load these for `zot --help`. */

export const SAVED_SEARCHES_ACTIONS = ['list', 'show', 'run'] as const;
export type SavedSearchesAction = (typeof SAVED_SEARCHES_ACTIONS)[number];

export const MANAGE_SAVED_SEARCHES_ACTIONS = ['create', 'delete'] as const;
export type ManageSavedSearchesAction = (typeof MANAGE_SAVED_SEARCHES_ACTIONS)[number];

/** Saved searches per page of `list`. */
export const LIST_DEFAULT = 50;
export const LIST_MAX = 100;
/** Items per page of `run`. */
export const RUN_DEFAULT = 25;
export const RUN_MAX = 100;

/** Zotero's limit on a saved search's name. */
export const SEARCH_NAME_MAX = 255;
/** Conditions one new saved search may hold. */
export const CONDITIONS_MAX = 50;
