// The journal package: the Journal contract, its backends, export/verify helpers, and openJournal,
// the one place a journal URL is turned into a backend.
export type * from "./types.js";
export { MemoryJournal } from "./memory/journal.js";
export { SqliteJournal, type SqliteJournalOptions } from "./sqlite/journal.js";
export { SQLITE_SCHEMA_VERSION } from "./sqlite/schema.js";
export { exportJsonl, jsonlLine, verifyJsonl, type JsonlVerifyResult, type LineRecord } from "./transfer/export.js";
export { appendUnderNewFence } from "./fenced-append.js";
export {
  verifyChain,
  chainEvents,
  checkAppend,
  forkMarkerEvent,
  UnreadableStorage,
  type StoredRecord,
} from "./chain.js";
export { isJournalUnreadable } from "./unreadable.js";
export { projectComputeState, parseComputeState } from "./compute-state.js";
export { openJournal } from "./open.js";
export { decodePageToken, encodePageToken, normalizePageSize, normalizeProject, READ_PAGE_SIZE } from "./paging.js";
