/**
 * The rate-limit state and retry budget now live in the shared outbound HTTP layer
 * (core/http/ratelimit.ts), which every client uses; re-exported here for the Zotero client's
 * existing importers.
 */
export * from '../http/ratelimit.js';
