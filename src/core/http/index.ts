/** The outbound HTTP layer every remote client uses (send.ts). */
export {
  createHttpLayer,
  CREDENTIAL_HEADERS,
  MAX_REDIRECTS,
  type Failures,
  type BodyStream,
  type HttpAnswer,
  type HttpLayer,
  type HttpLayerOptions,
  type HttpRequest,
  type RetryPolicy,
  type WaitCause,
} from './send.js';
export {
  BODY_EXCERPT,
  describeTransportError,
  excerpt,
  isTimeout,
  redactError,
  RESETS,
  transportReason,
} from './errors.js';
export * from './ratelimit.js';
export type { CallContext, Clock, FetchLike, Slots } from './types.js';
