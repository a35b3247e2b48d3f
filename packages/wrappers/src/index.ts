/**
 * `@ugent/wrappers`: functions `Tool → Tool` built on Effect's own primitives
 * (Traced, Cached, Retry, Timeout, CircuitBreaker, RateLimited, Sandboxed,
 * Audited, Summarized) and the stores they write to (memory, SQLite,
 * PostgreSQL; Redis for shared limits and breaker state).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export { Audited, type AuditedOptions } from "./Audited.ts"
/** @since 0.2.0 */
export * as ApprovalStore from "./ApprovalStore.ts"
/** @since 0.1.0 */
export * as AuditStore from "./AuditStore.ts"
/** @since 0.1.0 */
export { Cached, type CachedOptions, type CachedTool, isCached } from "./Cached.ts"
/** @since 0.1.0 */
export { CircuitBreaker, type CircuitBreakerOptions, CircuitOpen } from "./CircuitBreaker.ts"
/** @since 0.2.0 */
export { OnStoreError, type OnStoreErrorPolicy } from "./OnStoreError.ts"
/** @since 0.2.0 */
export * as Journal from "./Journal.ts"
/** @since 0.1.0 */
export * as MemoryStore from "./MemoryStore.ts"
/** @since 0.1.0 */
export {
  type Limit,
  type Limits,
  RateLimited,
  RateLimitedError,
  type RateLimitedOptions,
  RateLimiterUnavailable
} from "./RateLimited.ts"
/** @since 0.1.0 */
export { Retry, type RetryOptions } from "./Retry.ts"
/** @since 0.1.0 */
export {
  CommandDenied,
  type DenyRule,
  type Invocation,
  OutputTooLarge,
  OutsideWorkspace,
  Sandboxed,
  type SandboxedOptions,
  type SandboxPolicy
} from "./Sandboxed.ts"
/** @since 0.1.0 */
export * as Sqlite from "./Sqlite.ts"
/** @since 0.1.0 */
export * as StoreError from "./StoreError.ts"
/** @since 0.1.0 */
export * as Stores from "./Stores.ts"
/** @since 0.1.0 */
export {
  type MemoryToolNames,
  memoryList,
  memoryRead,
  Summarized,
  type SummarizedOptions,
  Summary
} from "./Summarized.ts"
/** @since 0.1.0 */
export { TimedOut, Timeout, type TimeoutOptions } from "./Timeout.ts"
/** @since 0.1.0 */
export { type TraceContext, Traced, type TracedOptions } from "./Traced.ts"
/** @since 0.1.0 */
export * as TraceStore from "./TraceStore.ts"
