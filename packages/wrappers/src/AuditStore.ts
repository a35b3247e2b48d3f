/**
 * The `AuditStore` is the log of who called what: `Audited` records an entry
 * before each call (pending) and one after it (success or failure, with the
 * duration, the error's tag, message and kind, a summary of the result and an
 * estimate of its tokens). It answers filtered listings and, for a time
 * window, analytics: per tool and per observer the calls, successes,
 * failures, refusals, success rate, average, median and p95 duration; the
 * refusals by reason; and the totals.
 *
 * A refusal is a failure of kind `denied` or `rate_limited`: the road
 * declined to run the call (a trust level, a policy, an approval, a rate
 * limit, a loop), as opposed to a call that ran and failed.
 *
 * Every backend computes the analytics with the same definitions, so the
 * numbers agree whichever store holds the entries: calls are the `"after"`
 * entries in the window, p50 and p95 are nearest-rank percentiles, and
 * averages are rounded to the microsecond (3 decimals of a millisecond).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import * as internal from "./internal/auditAnalytics.ts"
import * as model from "./internal/auditModel.ts"
import * as sqlStore from "./internal/sql/auditStore.ts"
import * as databases from "./internal/sql/databases.ts"
import type { PgOptions, SqliteOptions } from "./internal/sql/databases.ts"
import type { StoreError } from "./StoreError.ts"

/**
 * Whether an entry was written before the call or after it.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AuditPhase: typeof model.AuditPhase = model.AuditPhase

/**
 * @category models
 * @since 0.1.0
 */
export type AuditPhase = model.AuditPhase

/**
 * `"pending"` before the call, `"success"` or `"failure"` after it.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AuditStatus: typeof model.AuditStatus = model.AuditStatus

/**
 * @category models
 * @since 0.1.0
 */
export type AuditStatus = model.AuditStatus

/**
 * The failure an entry after a call records: the error's tag, its message,
 * and its kind (`ToolError.kindOf`: `denied`, `rate_limited`, `not_found`…;
 * absent on entries recorded before kinds were).
 *
 * @category schemas
 * @since 0.2.0
 */
export const AuditError: typeof model.AuditError = model.AuditError

/**
 * @category models
 * @since 0.2.0
 */
export type AuditError = model.AuditError

/**
 * One audit entry. `id` is the entry's own id; `callId` pairs the `"before"`
 * and `"after"` entries of one call. `at` is epoch milliseconds.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AuditEntry: typeof model.AuditEntry = model.AuditEntry

/**
 * @category models
 * @since 0.1.0
 */
export type AuditEntry = model.AuditEntry

/**
 * A filter for {@link AuditStoreShape.list} (`since` inclusive, `until`
 * exclusive, epoch milliseconds), and the time window of
 * {@link AuditStoreShape.analytics} (`since` inclusive, `until` exclusive; an
 * open end takes everything on that side).
 *
 * @category models
 * @since 0.1.0
 */
export type { ListQuery, TimeWindow } from "./internal/auditModel.ts"

/**
 * The kinds of failure that are refusals: the road declined to run the call
 * (`denied`: a trust level, policy, approval or jail; `rate_limited`: a rate
 * limit or a loop).
 *
 * @category schemas
 * @since 0.2.0
 */
export const RefusalKind: typeof model.RefusalKind = model.RefusalKind

/**
 * @category models
 * @since 0.2.0
 */
export type RefusalKind = model.RefusalKind

/**
 * The statistics of one tool or one observer over a window: calls,
 * successes, failures, refusals (the failures of a refusal kind), the success
 * rate, and the average, median (p50) and p95 durations, nearest rank. The
 * durations are absent when no completed call of the group recorded one.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AuditStats: typeof model.AuditStats = model.AuditStats

/**
 * @category models
 * @since 0.1.0
 */
export type AuditStats = model.AuditStats

/**
 * How many calls were refused for one reason (the error's tag) and kind.
 *
 * @category schemas
 * @since 0.2.0
 */
export const RefusalCount: typeof model.RefusalCount = model.RefusalCount

/**
 * @category models
 * @since 0.2.0
 */
export type RefusalCount = model.RefusalCount

/**
 * The counts of a whole window.
 *
 * @category schemas
 * @since 0.2.0
 */
export const AuditTotals: typeof model.AuditTotals = model.AuditTotals

/**
 * @category models
 * @since 0.2.0
 */
export type AuditTotals = model.AuditTotals

/**
 * One observer's calls of one tool: a row of the persona × tool table.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ObserverToolStats: typeof model.ObserverToolStats = model.ObserverToolStats

/**
 * @category models
 * @since 0.2.0
 */
export type ObserverToolStats = model.ObserverToolStats

/**
 * The failures of one error (tag and kind): how many, and when the latest was.
 *
 * @category schemas
 * @since 0.2.0
 */
export const FailureCount: typeof model.FailureCount = model.FailureCount

/**
 * @category models
 * @since 0.2.0
 */
export type FailureCount = model.FailureCount

/**
 * Analytics of a window: per tool and per observer (each sorted by key),
 * refusals by reason (most frequent first, then by reason), each observer's
 * calls of each tool, every failure grouped by its error, and the totals.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AuditAnalytics: typeof model.AuditAnalytics = model.AuditAnalytics

/**
 * @category models
 * @since 0.1.0
 */
export type AuditAnalytics = model.AuditAnalytics

/**
 * The operations of an audit store: `record` writes one entry before it
 * returns (an entry whose id is already stored is ignored), `append` writes
 * one soon (before any read sees the store), `list` answers a filter newest
 * first (by `at`, then `id`), `analytics` summarizes a window.
 *
 * @category models
 * @since 0.1.0
 */
export type { AuditStoreShape } from "./internal/auditModel.ts"

/**
 * The audit store service.
 *
 * **Example** (Recording a call and reading the analytics)
 * ```ts
 * import { AuditStore } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   const audit = yield* AuditStore.AuditStore
 *   const call = { callId: "c1", observerId: "ci", path: "file.read", inputSummary: "{\"path\":\"a.txt\"}" }
 *   yield* audit.record({ ...call, id: "c1/before", phase: "before", at: 1000, status: "pending" })
 *   yield* audit.record({ ...call, id: "c1/after", phase: "after", at: 1012, status: "success", durationMillis: 12 })
 *   const { byTool } = yield* audit.analytics({ since: 0 })
 *   return byTool.map((s) => `${s.key}: ${s.calls} call(s), ${s.successRate * 100}% ok, p95 ${s.p95DurationMillis} ms`)
 * })
 * console.log(Effect.runSync(Effect.provide(program, AuditStore.layerMemory())))
 * // => [ 'file.read: 1 call(s), 100% ok, p95 12 ms' ]
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export class AuditStore extends Context.Service<AuditStore, model.AuditStoreShape>()("ugent/AuditStore") {}

/**
 * The 1-based rank of the median among `n` sorted values, nearest rank:
 * `ceil(0.5 · n)`, computed in integers as the SQL stores do.
 *
 * @category analytics
 * @since 0.2.0
 */
export const p50Rank: (n: number) => number = internal.p50Rank

/**
 * The 1-based rank of the 95th percentile among `n` sorted values, nearest
 * rank: `ceil(0.95 · n)`, computed in integers as the SQL stores do.
 *
 * @category analytics
 * @since 0.1.0
 */
export const p95Rank: (n: number) => number = internal.p95Rank

/**
 * Rounds an average duration to the microsecond, as every store does.
 *
 * @category analytics
 * @since 0.1.0
 */
export const roundMillis: (millis: number) => number = internal.roundMillis

/**
 * Whether an entry records a refusal: a failure whose kind is `denied` or
 * `rate_limited`.
 *
 * **Example** (A denial is a refusal; a missing file is not)
 * ```ts
 * import { AuditStore } from "@ugent/wrappers"
 * const entry = { id: "c1/after", callId: "c1", phase: "after" as const, at: 0, observerId: "ci", path: "file.read", inputSummary: "{}", status: "failure" as const }
 * console.log(AuditStore.isRefusal({ ...entry, error: { tag: "Forbidden", message: "…", kind: "denied" } }))
 * // => true
 * console.log(AuditStore.isRefusal({ ...entry, error: { tag: "FileNotFound", message: "…", kind: "not_found" } }))
 * // => false
 * ```
 *
 * @category analytics
 * @since 0.2.0
 */
export const isRefusal: (entry: AuditEntry) => boolean = internal.isRefusal

/**
 * Computes the analytics of completed entries in memory, with the same
 * definitions as the SQL stores.
 *
 * **Example** (Refusals counted by reason)
 * ```ts
 * import { AuditStore } from "@ugent/wrappers"
 * const call = (n: number, tag: string, kind: "denied" | "not_found") => ({
 *   id: `c${n}/after`, callId: `c${n}`, phase: "after" as const, at: n, observerId: "agent", path: "file.read",
 *   inputSummary: "{}", status: "failure" as const, durationMillis: n, error: { tag, message: "…", kind }
 * })
 * const { refusals, totals, byTool } = AuditStore.analyze([call(1, "Forbidden", "denied"), call(2, "Forbidden", "denied"), call(3, "FileNotFound", "not_found")], {})
 * console.log(refusals, totals, byTool[0]?.p50DurationMillis)
 * // => [ { reason: 'Forbidden', kind: 'denied', count: 2 } ] { calls: 3, successes: 0, failures: 3, refusals: 2 } 2
 * ```
 *
 * @category analytics
 * @since 0.1.0
 */
export const analyze: (entries: Iterable<AuditEntry>, window: model.TimeWindow) => AuditAnalytics = internal.analyze

/**
 * The most characters an entry keeps of each of its texts (input and result
 * summaries, error message) on every backend: longer ones are cut, with `…`.
 *
 * @category constants
 * @since 0.2.0
 */
export const maxTextChars: number = model.maxTextChars

/**
 * An audit store in memory. It keeps at most `capacity` entries (default
 * 100,000) and forgets the oldest recorded first.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeMemory = (options?: { readonly capacity?: number | undefined }): model.AuditStoreShape => {
  const capacity = options?.capacity ?? 100_000
  const entries = new Map<string, AuditEntry>()
  const record = (entry: AuditEntry) =>
    Effect.sync(() => {
      if (entries.has(entry.id)) return
      entries.set(entry.id, model.bounded(entry))
      while (entries.size > capacity) {
        const oldest = entries.keys().next().value
        if (oldest === undefined) break
        entries.delete(oldest)
      }
    })
  return {
    // In memory, stored at once either way.
    record,
    append: record,
    list: (query) =>
      Effect.sync(() => {
        const out: Array<AuditEntry> = []
        for (const e of entries.values()) {
          if (query.since !== undefined && e.at < query.since) continue
          if (query.until !== undefined && e.at >= query.until) continue
          if (query.path !== undefined && e.path !== query.path) continue
          if (query.observerId !== undefined && e.observerId !== query.observerId) continue
          out.push(e)
        }
        return out.sort(newestFirst).slice(0, Math.max(0, query.limit))
      }),
    analytics: (window) => Effect.sync(() => analyze(entries.values(), window))
  }
}

const newestFirst = (a: AuditEntry, b: AuditEntry): number => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

/**
 * A fresh in-memory audit store (see {@link makeMemory}).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory = (options?: { readonly capacity?: number | undefined }): Layer.Layer<AuditStore> =>
  Layer.sync(AuditStore, () => AuditStore.of(makeMemory(options)))

/**
 * An audit store on the `SqlClient` in context (SQLite or PostgreSQL). It
 * brings its table up to date when built; each `record` is written before it
 * returns (with the entries `append` queued, in one statement); `append`
 * writes behind, within 50 ms, and every `list` and `analytics` writes what is
 * queued first.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql: Layer.Layer<AuditStore, StoreError, SqlClient.SqlClient> = Layer.effect(
  AuditStore,
  Effect.map(sqlStore.make(), AuditStore.of)
)

/**
 * How a SQL audit store writes. By default `append` writes behind (within
 * about 50 ms, like traces), so an audited read costs a push: a process
 * killed at once (`kill -9`, a crash) loses the entries of the last
 * milliseconds, among them calls it had already answered. With `sync`, every
 * `append` commits before it returns, as `record` does: no answered call is
 * missing from the log, and each audited call waits for a commit.
 *
 * @category models
 * @since 0.2.0
 */
export interface AuditOptions {
  readonly sync?: boolean | undefined
}

/**
 * An audit store on the `SqlClient` in context, with {@link AuditOptions}.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerSqlWith = (options: AuditOptions): Layer.Layer<AuditStore, StoreError, SqlClient.SqlClient> =>
  Layer.effect(AuditStore, Effect.map(sqlStore.make(options), AuditStore.of))

/**
 * An audit store in a SQLite file (default `<cwd>/.ugent/ugent.db`). Every
 * client of one file in one process shares one connection; to build all
 * three stores at once, use `Stores.layerSqlite`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSqlite = (options: SqliteOptions & AuditOptions = {}): Layer.Layer<AuditStore, StoreError> =>
  layerSqlWith(options).pipe(Layer.provide(databases.sqlite("audit", options)))

/**
 * An audit store in PostgreSQL, on its own pool. To share one pool with the
 * other stores, use `Stores.layerPg`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerPg = (options: PgOptions & AuditOptions): Layer.Layer<AuditStore, StoreError> =>
  layerSqlWith(options).pipe(Layer.provide(databases.pg("audit", options)))
