// What an audit store holds and answers, shared by the public `AuditStore`
// module and the SQL store, so that neither imports the other's module.
import { ToolError } from "@ugent/core"
import { Schema } from "effect"
import type { Effect } from "effect"
import type { StoreError } from "../StoreError.ts"

export const AuditPhase = Schema.Literals(["before", "after"])
export type AuditPhase = typeof AuditPhase.Type

export const AuditStatus = Schema.Literals(["pending", "success", "failure"])
export type AuditStatus = typeof AuditStatus.Type

export const AuditError = Schema.Struct({
  tag: Schema.String,
  message: Schema.String,
  /** The failure's kind (`ToolError.kindOf`); absent on entries recorded before kinds were. */
  kind: Schema.optionalKey(ToolError.KindSchema)
})
export type AuditError = typeof AuditError.Type

export const AuditEntry = Schema.Struct({
  id: Schema.String,
  callId: Schema.String,
  phase: AuditPhase,
  at: Schema.Number,
  observerId: Schema.String,
  path: Schema.String,
  inputSummary: Schema.String,
  status: AuditStatus,
  durationMillis: Schema.optionalKey(Schema.Number),
  error: Schema.optionalKey(AuditError),
  resultSummary: Schema.optionalKey(Schema.String),
  /** Characters of the result / 4, rounded up. */
  estimatedTokens: Schema.optionalKey(Schema.Number),
  /** The client's own id of the call (an MCP client's tool-use id), to join its records with ours. */
  clientCallId: Schema.optionalKey(Schema.String),
  /** The server that served the call, in a room of several (`ugent serve --instance`). */
  instance: Schema.optionalKey(Schema.String)
})
export type AuditEntry = typeof AuditEntry.Type

/** The most characters an entry keeps of each text (summaries, error message), whatever its writer gave. */
export const maxTextChars = 2048

const cut = (s: string): string => (s.length <= maxTextChars ? s : `${s.slice(0, maxTextChars - 1)}…`)

/** The entry as a store keeps it: its texts cut to {@link maxTextChars}, so a row stays small. */
export const bounded = (e: AuditEntry): AuditEntry => {
  if (
    e.inputSummary.length <= maxTextChars &&
    (e.resultSummary === undefined || e.resultSummary.length <= maxTextChars) &&
    (e.error === undefined || e.error.message.length <= maxTextChars)
  ) {
    return e
  }
  return {
    ...e,
    inputSummary: cut(e.inputSummary),
    ...(e.resultSummary === undefined ? {} : { resultSummary: cut(e.resultSummary) }),
    ...(e.error === undefined ? {} : { error: { ...e.error, message: cut(e.error.message) } })
  }
}

export interface ListQuery {
  readonly since?: number | undefined
  readonly until?: number | undefined
  readonly path?: string | undefined
  readonly observerId?: string | undefined
  readonly limit: number
}

export interface TimeWindow {
  readonly since?: number | undefined
  readonly until?: number | undefined
  /** Only this observer's entries (a caller's own figures). */
  readonly observerId?: string | undefined
}

/** The kinds of failure that are refusals: the road declined to run the call. */
export const RefusalKind = Schema.Literals(["denied", "rate_limited"])
export type RefusalKind = typeof RefusalKind.Type

export const AuditStats = Schema.Struct({
  /** The tool's path, or the observer's id. */
  key: Schema.String,
  calls: Schema.Int,
  successes: Schema.Int,
  failures: Schema.Int,
  /** Failures whose kind is a refusal (`denied`, `rate_limited`): part of `failures`. */
  refusals: Schema.Int,
  /** `successes / calls`, from 0 to 1. */
  successRate: Schema.Number,
  averageDurationMillis: Schema.optionalKey(Schema.Number),
  /** Nearest rank: the `ceil(0.5 · n)`-th smallest of the `n` durations. */
  p50DurationMillis: Schema.optionalKey(Schema.Number),
  /** Nearest rank: the `ceil(0.95 · n)`-th smallest of the `n` durations. */
  p95DurationMillis: Schema.optionalKey(Schema.Number)
})
export type AuditStats = typeof AuditStats.Type

export const RefusalCount = Schema.Struct({
  /** The error's tag, e.g. `"Forbidden"`. */
  reason: Schema.String,
  kind: RefusalKind,
  count: Schema.Int
})
export type RefusalCount = typeof RefusalCount.Type

/** One observer's calls of one tool: a row of the persona × tool table. */
export const ObserverToolStats = Schema.Struct({
  observerId: Schema.String,
  path: Schema.String,
  calls: Schema.Int,
  successes: Schema.Int,
  failures: Schema.Int,
  refusals: Schema.Int
})
export type ObserverToolStats = typeof ObserverToolStats.Type

/** Failures of one error (tag and kind), refusals and tool failures alike. */
export const FailureCount = Schema.Struct({
  /** The error's tag, e.g. `"FileNotFound"`. */
  reason: Schema.String,
  /** Its kind; absent on entries recorded before kinds were. */
  kind: Schema.optionalKey(ToolError.KindSchema),
  count: Schema.Int,
  /** When the latest of them was recorded (epoch milliseconds). */
  lastAt: Schema.Number
})
export type FailureCount = typeof FailureCount.Type

export const AuditTotals = Schema.Struct({
  calls: Schema.Int,
  successes: Schema.Int,
  failures: Schema.Int,
  refusals: Schema.Int
})
export type AuditTotals = typeof AuditTotals.Type

export const AuditAnalytics = Schema.Struct({
  byTool: Schema.Array(AuditStats),
  byObserver: Schema.Array(AuditStats),
  /** By the server that served the calls (entries that name one: a room's instances). */
  byInstance: Schema.optionalKey(Schema.Array(AuditStats)),
  /** Refusals by reason and kind, most frequent first, then by reason. */
  refusals: Schema.Array(RefusalCount),
  /** Each observer's calls of each tool, by observer, then path. */
  byObserverTool: Schema.Array(ObserverToolStats),
  /** Every failure grouped by its error, most frequent first, then by reason. */
  failures: Schema.Array(FailureCount),
  totals: AuditTotals
})
export type AuditAnalytics = typeof AuditAnalytics.Type

export interface AuditStoreShape {
  /** Writes one entry; it is stored when the effect succeeds. An entry whose id is already stored is ignored. */
  readonly record: (entry: AuditEntry) => Effect.Effect<void, StoreError>
  /**
   * Writes one entry soon (write-behind): it is stored within a few
   * milliseconds, before any `list` or `analytics` answers, and before the
   * store closes. It fails at once if the store is closed or its writes are
   * failing. `record` is for an entry that must be stored before something
   * else happens.
   */
  readonly append: (entry: AuditEntry) => Effect.Effect<void, StoreError>
  /** Matching entries, newest first (by `at`, then `id`), at most `limit`. */
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<AuditEntry>, StoreError>
  readonly analytics: (window: TimeWindow) => Effect.Effect<AuditAnalytics, StoreError>
}
