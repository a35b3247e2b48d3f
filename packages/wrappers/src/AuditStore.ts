/**
 * The `AuditStore` is the log of who called what: `Audited` records an entry
 * before each call (pending) and one after it (success or failure, with the
 * duration, the error's tag and message, a summary of the result and an
 * estimate of its tokens). It answers filtered listings and, for a time
 * window, per-tool and per-observer analytics: calls, success rate, average
 * and p95 duration.
 *
 * Every backend computes the analytics with the same definitions, so the
 * numbers agree whichever store holds the entries: calls are the `"after"`
 * entries in the window, p95 is the nearest-rank percentile, and averages are
 * rounded to the microsecond (3 decimals of a millisecond).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as internal from "./internal/auditAnalytics.ts"
import * as sqlStore from "./internal/sql/auditStore.ts"
import * as databases from "./internal/sql/databases.ts"
import type { StoreError } from "./StoreError.ts"
import type { PgOptions, SqliteOptions } from "./Stores.ts"

/**
 * Whether an entry was written before the call or after it.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AuditPhase = Schema.Literals(["before", "after"])

/**
 * @category models
 * @since 0.1.0
 */
export type AuditPhase = typeof AuditPhase.Type

/**
 * `"pending"` before the call, `"success"` or `"failure"` after it.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AuditStatus = Schema.Literals(["pending", "success", "failure"])

/**
 * @category models
 * @since 0.1.0
 */
export type AuditStatus = typeof AuditStatus.Type

/**
 * One audit entry. `id` is the entry's own id; `callId` pairs the `"before"`
 * and `"after"` entries of one call. `at` is epoch milliseconds.
 *
 * @category schemas
 * @since 0.1.0
 */
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
  error: Schema.optionalKey(Schema.Struct({ tag: Schema.String, message: Schema.String })),
  resultSummary: Schema.optionalKey(Schema.String),
  /** Characters of the result / 4, rounded up. */
  estimatedTokens: Schema.optionalKey(Schema.Number)
})

/**
 * @category models
 * @since 0.1.0
 */
export type AuditEntry = typeof AuditEntry.Type

/**
 * A filter for {@link AuditStoreShape.list}: `since` is inclusive, `until`
 * exclusive (epoch milliseconds).
 *
 * @category models
 * @since 0.1.0
 */
export interface ListQuery {
  readonly since?: number | undefined
  readonly until?: number | undefined
  readonly path?: string | undefined
  readonly observerId?: string | undefined
  readonly limit: number
}

/**
 * The time window of {@link AuditStoreShape.analytics}: `since` inclusive,
 * `until` exclusive; an open end takes everything on that side.
 *
 * @category models
 * @since 0.1.0
 */
export interface TimeWindow {
  readonly since?: number | undefined
  readonly until?: number | undefined
}

/**
 * The statistics of one tool or one observer over a window. The durations are
 * absent when no completed call of the group recorded one.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AuditStats = Schema.Struct({
  /** The tool's path, or the observer's id. */
  key: Schema.String,
  calls: Schema.Int,
  successes: Schema.Int,
  failures: Schema.Int,
  /** `successes / calls`, from 0 to 1. */
  successRate: Schema.Number,
  averageDurationMillis: Schema.optionalKey(Schema.Number),
  /** Nearest rank: the `ceil(0.95 · n)`-th smallest of the `n` durations. */
  p95DurationMillis: Schema.optionalKey(Schema.Number)
})

/**
 * @category models
 * @since 0.1.0
 */
export type AuditStats = typeof AuditStats.Type

/**
 * Analytics of a window, per tool and per observer, each sorted by key.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AuditAnalytics = Schema.Struct({
  byTool: Schema.Array(AuditStats),
  byObserver: Schema.Array(AuditStats)
})

/**
 * @category models
 * @since 0.1.0
 */
export type AuditAnalytics = typeof AuditAnalytics.Type

/**
 * The operations of an audit store.
 *
 * @category models
 * @since 0.1.0
 */
export interface AuditStoreShape {
  /** Writes one entry; it is stored when the effect succeeds. An entry whose id is already stored is ignored. */
  readonly record: (entry: AuditEntry) => Effect.Effect<void, StoreError>
  /** Matching entries, newest first (by `at`, then `id`), at most `limit`. */
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<AuditEntry>, StoreError>
  readonly analytics: (window: TimeWindow) => Effect.Effect<AuditAnalytics, StoreError>
}

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
export class AuditStore extends Context.Service<AuditStore, AuditStoreShape>()("ugent/AuditStore") {}

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
 * Computes the analytics of completed entries in memory, with the same
 * definitions as the SQL stores.
 *
 * @category analytics
 * @since 0.1.0
 */
export const analyze = (entries: Iterable<AuditEntry>, window: TimeWindow): AuditAnalytics => {
  const after: Array<AuditEntry> = []
  for (const e of entries) {
    if (e.phase !== "after") continue
    if (window.since !== undefined && e.at < window.since) continue
    if (window.until !== undefined && e.at >= window.until) continue
    after.push(e)
  }
  const group = (keyOf: (e: AuditEntry) => string): ReadonlyArray<AuditStats> => {
    const groups = new Map<string, Array<AuditEntry>>()
    for (const e of after) {
      const key = keyOf(e)
      const list = groups.get(key)
      if (list === undefined) groups.set(key, [e])
      else list.push(e)
    }
    return [...groups.keys()]
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((key) => statsOf(key, groups.get(key) ?? []))
  }
  return { byTool: group((e) => e.path), byObserver: group((e) => e.observerId) }
}

const statsOf = (key: string, entries: ReadonlyArray<AuditEntry>): AuditStats => {
  const calls = entries.length
  const successes = entries.filter((e) => e.status === "success").length
  const failures = entries.filter((e) => e.status === "failure").length
  const durations = entries.flatMap((e) => (e.durationMillis === undefined ? [] : [e.durationMillis]))
  const stats: AuditStats = { key, calls, successes, failures, successRate: calls === 0 ? 0 : successes / calls }
  if (durations.length === 0) return stats
  durations.sort((a, b) => a - b)
  const sum = durations.reduce((s, d) => s + d, 0)
  return {
    ...stats,
    averageDurationMillis: roundMillis(sum / durations.length),
    p95DurationMillis: durations[p95Rank(durations.length) - 1] ?? 0
  }
}

/**
 * An audit store in memory. It keeps at most `capacity` entries (default
 * 100,000) and forgets the oldest recorded first.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeMemory = (options?: { readonly capacity?: number | undefined }): AuditStoreShape => {
  const capacity = options?.capacity ?? 100_000
  const entries = new Map<string, AuditEntry>()
  return {
    record: (entry) =>
      Effect.sync(() => {
        if (entries.has(entry.id)) return
        entries.set(entry.id, entry)
        while (entries.size > capacity) {
          const oldest = entries.keys().next().value
          if (oldest === undefined) break
          entries.delete(oldest)
        }
      }),
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
 * returns.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql: Layer.Layer<AuditStore, StoreError, SqlClient.SqlClient> = Layer.effect(
  AuditStore,
  Effect.map(sqlStore.make, AuditStore.of)
)

/**
 * An audit store in a SQLite file (default `<cwd>/.ugent/ugent.db`). Every
 * client of one file in one process shares one connection; to build all
 * three stores at once, use `Stores.layerSqlite`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSqlite = (options: SqliteOptions = {}): Layer.Layer<AuditStore, StoreError> =>
  layerSql.pipe(Layer.provide(databases.sqlite("audit", options)))

/**
 * An audit store in PostgreSQL, on its own pool. To share one pool with the
 * other stores, use `Stores.layerPg`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerPg = (options: PgOptions): Layer.Layer<AuditStore, StoreError> =>
  layerSql.pipe(Layer.provide(databases.pg("audit", options)))
