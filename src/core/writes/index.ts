/** Versioned write engine: set-like changes with batching and 412 re-read-and-retry. */
export {
  applySetChange,
  changedFields,
  DEFAULT_MAX_ROUNDS,
  outcomeUnknown,
  RefusedChange,
  type ObjectData,
  type SetChangeInput,
  type SetChangeResult,
} from './engine.js';
export { addTags, addToCollections, removeFromCollections, removeTags, type Tag } from './changes.js';
export { applySetChangeReported, type Reporting } from './reported.js';
export { createObjects, type CreateObjectsInput } from './create.js';
export { freshWriteIds, newWriteSeed, writeIdsFrom, type WriteIds } from './ids.js';
