/**
 * The one list of all tools, and of the CLI groups their commands form. Both surfaces iterate
 * it; nothing else names a tool. Tool modules import nothing heavy at load time (handlers import
 * lazily), so listing them is cheap enough for `zot --help` and `zot schema`.
 */
import type { AnyTool, GroupDeclaration } from '../core/tool.js';
import annotationGroup from './annotations/group.js';
import attachmentGroup from './attachments/group.js';
import collectionGroup from './collections/group.js';
import trashGroup from './items/group.js';
import noteGroup from './notes/group.js';
import indexGroup from './search/group.js';
import tagGroup from './tags/group.js';
import savedSearchGroup from './searches/group.js';
import listAnnotations from './annotations/list-annotations.js';
import createAnnotation from './annotations/create-annotation.js';
import listCollections from './collections/list-collections.js';
import manageCollections from './collections/manage-collections.js';
import evidenceTable from './evidence/evidence-table.js';
import getFulltext from './fulltext/get-fulltext.js';
import getAttachment from './attachments/get-attachment.js';
import attachmentAudit from './attachments/audit.js';
import attachFile from './attachments/attach-file.js';
import createItems from './items/create-items.js';
import createNote from './notes/create-note.js';
import deleteItems from './items/delete-items.js';
import importItems from './items/import.js';
import listNotes from './notes/list-notes.js';
import manageTags from './tags/manage-tags.js';
import getItem from './items/get-item.js';
import listTags from './tags/list-tags.js';
import searchItems from './items/search-items.js';
import stats from './library/stats.js';
import exportItems from './citations/export.js';
import checkCitations from './citations/check-citations.js';
import formatBibliography from './citations/format-bibliography.js';
import styles from './citations/styles.js';
import schema from './library/schema.js';
import sync from './library/sync.js';
import summarize from './items/summarize.js';
import trashItems from './items/trash-items.js';
import findDuplicates from './items/find-duplicates.js';
import mergeItems from './items/merge-items.js';
import updateItem from './items/update-item.js';
import libraryGroups from './library/groups.js';
import indexLibrary from './search/zotero-index.js';
import semanticSearch from './search/semantic-search.js';
import whoami from './library/whoami.js';
import tagAudit from './tags/tag-audit.js';
import checkRetractions from './metadata/check-retractions.js';
import updateStatus from './metadata/update-status.js';
import savedSearches from './searches/saved-searches.js';
import manageSavedSearches from './searches/manage-saved-searches.js';
import enrich from './metadata/enrich.js';
import history from './history/history.js';
import undo from './history/undo.js';

/** Each declaration is an AnyTool as `defineTool` typed it: no cast. */
export const tools: readonly AnyTool[] = [
  whoami,
  libraryGroups,
  listCollections,
  manageCollections,
  schema,
  sync,
  evidenceTable,
  searchItems,
  getItem,
  getFulltext,
  getAttachment,
  attachmentAudit,
  semanticSearch,
  indexLibrary,
  listTags,
  stats,
  formatBibliography,
  exportItems,
  checkCitations,
  checkRetractions,
  updateStatus,
  enrich,
  styles,
  summarize,
  createItems,
  importItems,
  updateItem,
  listNotes,
  createNote,
  attachFile,
  listAnnotations,
  createAnnotation,
  manageTags,
  tagAudit,
  trashItems,
  deleteItems,
  findDuplicates,
  mergeItems,
  savedSearches,
  manageSavedSearches,
  history,
  undo,
];

/** The help of each CLI group (`zot tag`), declared beside its noun's tools. */
export const groups: readonly GroupDeclaration[] = [
  attachmentGroup,
  collectionGroup,
  noteGroup,
  annotationGroup,
  tagGroup,
  trashGroup,
  indexGroup,
  savedSearchGroup,
];
