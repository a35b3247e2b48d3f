/**
 * The `TraceStore` keeps one record per traced call: what was called (its
 * path), with what input, what came out (output or typed error), how long it
 * took, which call it ran under, and which alternatives the caller weighed.
 * `Traced` appends to it; readers walk a call tree with {@link TraceStoreShape.children}
 * and {@link TraceStoreShape.byRoot}.
 *
 * Three backends: in memory ({@link layerMemory}), SQLite (the embedded
 * default, a file under `<workspace>/.ugent/`) and PostgreSQL, for many
 * agents on many machines; the SQL layers batch their writes and flush what
 * is pending when their scope closes.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as databases from "./internal/sql/databases.ts"
import * as sqlStore from "./internal/sql/traceStore.ts"
import type { StoreError } from "./StoreError.ts"
import type { BatchOptions, PgOptions, SqliteOptions } from "./Stores.ts"

/**
 * How a traced call ended.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TraceStatus = Schema.Literals(["success", "failure", "interrupted", "defect"])

/**
 * @category models
 * @since 0.1.0
 */
export type TraceStatus = typeof TraceStatus.Type

/**
 * One traced call. Times are epoch milliseconds; `input`, `output` and `error`
 * are the JSON forms the tool's schemas encode (the error as
 * `ToolError.toJson` gives it). A root call has `rootId === id` and no
 * `parentId`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TraceRecord = Schema.Struct({
  id: Schema.String,
  parentId: Schema.optionalKey(Schema.String),
  rootId: Schema.String,
  /** The tool's path or name: `"file.read"`, `"world.tools.file.read"`. */
  path: Schema.String,
  input: Schema.Json,
  output: Schema.optionalKey(Schema.Json),
  error: Schema.optionalKey(Schema.Json),
  status: TraceStatus,
  startedAt: Schema.Number,
  durationMillis: Schema.Number,
  /** The alternatives the caller considered (paths or names); may be empty. */
  alternatives: Schema.Array(Schema.String),
  observerId: Schema.optionalKey(Schema.String),
  sessionId: Schema.optionalKey(Schema.String)
})

/**
 * @category models
 * @since 0.1.0
 */
export type TraceRecord = typeof TraceRecord.Type

/**
 * What {@link TraceStoreShape.recent} returns: the newest records first,
 * optionally of one path only.
 *
 * @category models
 * @since 0.1.0
 */
export interface RecentQuery {
  readonly limit: number
  readonly path?: string | undefined
}

/**
 * The operations of a trace store. Lists come back in a fixed order on every
 * backend: `children` and `byRoot` oldest first (by `startedAt`, then `id`),
 * `recent` newest first.
 *
 * @category models
 * @since 0.1.0
 */
export interface TraceStoreShape {
  /**
   * Stores records. A record whose id is already stored is ignored (the first
   * write wins). A batching backend may write them later, but always before
   * its scope closes.
   */
  readonly append: (records: ReadonlyArray<TraceRecord>) => Effect.Effect<void, StoreError>
  /** Waits until every record appended so far is written. */
  readonly flush: Effect.Effect<void, StoreError>
  readonly get: (id: string) => Effect.Effect<Option.Option<TraceRecord>, StoreError>
  /** The calls made directly under `id`. */
  readonly children: (id: string) => Effect.Effect<ReadonlyArray<TraceRecord>, StoreError>
  /** Every call of the tree rooted at `rootId`, the root included. */
  readonly byRoot: (rootId: string) => Effect.Effect<ReadonlyArray<TraceRecord>, StoreError>
  readonly recent: (query: RecentQuery) => Effect.Effect<ReadonlyArray<TraceRecord>, StoreError>
}

/**
 * The trace store service.
 *
 * **Example** (Appending and reading a call tree)
 * ```ts
 * import { TraceStore } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   const store = yield* TraceStore.TraceStore
 *   const call = { input: {}, status: "success" as const, startedAt: 0, durationMillis: 1, alternatives: [] }
 *   yield* store.append([
 *     { ...call, id: "a", rootId: "a", path: "search.grep" },
 *     { ...call, id: "b", rootId: "a", parentId: "a", path: "file.read", alternatives: ["file.head"] }
 *   ])
 *   const children = yield* store.children("a")
 *   return children.map((r) => `${r.path} (considered ${r.alternatives.join(", ")})`)
 * })
 * console.log(Effect.runSync(Effect.provide(program, TraceStore.layerMemory())))
 * // => [ 'file.read (considered file.head)' ]
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export class TraceStore extends Context.Service<TraceStore, TraceStoreShape>()("ugent/TraceStore") {}

/**
 * The order of `children` and `byRoot`: by start time, then id.
 *
 * @category ordering
 * @since 0.1.0
 */
export const byStart = (a: TraceRecord, b: TraceRecord): number =>
  a.startedAt - b.startedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * A trace store in memory. It keeps at most `capacity` records (default
 * 100,000) and forgets the oldest appended first.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeMemory = (options?: { readonly capacity?: number | undefined }): TraceStoreShape => {
  const capacity = options?.capacity ?? 100_000
  const records = new Map<string, TraceRecord>()
  const byParent = new Map<string, Set<string>>()
  const byRootId = new Map<string, Set<string>>()
  const index = (map: Map<string, Set<string>>, key: string, id: string) => {
    const ids = map.get(key)
    if (ids === undefined) map.set(key, new Set([id]))
    else ids.add(id)
  }
  const unindex = (map: Map<string, Set<string>>, key: string, id: string) => {
    const ids = map.get(key)
    if (ids === undefined) return
    ids.delete(id)
    if (ids.size === 0) map.delete(key)
  }
  const remove = (record: TraceRecord) => {
    records.delete(record.id)
    if (record.parentId !== undefined) unindex(byParent, record.parentId, record.id)
    unindex(byRootId, record.rootId, record.id)
  }
  const lookup = (ids: Set<string> | undefined): ReadonlyArray<TraceRecord> => {
    if (ids === undefined) return []
    const out: Array<TraceRecord> = []
    for (const id of ids) {
      const record = records.get(id)
      if (record !== undefined) out.push(record)
    }
    return out.sort(byStart)
  }
  return {
    append: (batch) =>
      Effect.sync(() => {
        for (const record of batch) {
          if (records.has(record.id)) continue
          records.set(record.id, record)
          if (record.parentId !== undefined) index(byParent, record.parentId, record.id)
          index(byRootId, record.rootId, record.id)
          while (records.size > capacity) {
            const oldest = records.values().next().value
            if (oldest === undefined) break
            remove(oldest)
          }
        }
      }),
    flush: Effect.void,
    get: (id) => Effect.sync(() => Option.fromNullishOr(records.get(id))),
    children: (id) => Effect.sync(() => lookup(byParent.get(id))),
    byRoot: (rootId) => Effect.sync(() => lookup(byRootId.get(rootId))),
    recent: ({ limit, path }) =>
      Effect.sync(() => {
        const all: Array<TraceRecord> = []
        for (const record of records.values()) if (path === undefined || record.path === path) all.push(record)
        return all.sort((a, b) => byStart(b, a)).slice(0, Math.max(0, limit))
      })
  }
}

/**
 * A fresh in-memory trace store (see {@link makeMemory}).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory = (options?: { readonly capacity?: number | undefined }): Layer.Layer<TraceStore> =>
  Layer.sync(TraceStore, () => TraceStore.of(makeMemory(options)))

/**
 * A trace store on the `SqlClient` in context (SQLite or PostgreSQL). It
 * brings its table up to date when built, batches appends (see
 * `Stores.BatchOptions`) and writes what is pending before its scope closes.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql = (options?: BatchOptions): Layer.Layer<TraceStore, StoreError, SqlClient.SqlClient> =>
  Layer.effect(TraceStore, Effect.map(sqlStore.make(options), TraceStore.of))

/**
 * A trace store in a SQLite file (default `<cwd>/.ugent/ugent.db`). Every
 * client of one file in one process shares one connection; to build all
 * three stores at once, use `Stores.layerSqlite`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSqlite = (options: SqliteOptions & BatchOptions = {}): Layer.Layer<TraceStore, StoreError> =>
  layerSql(options).pipe(Layer.provide(databases.sqlite("trace", options)))

/**
 * A trace store in PostgreSQL, on its own pool. To share one pool with the
 * other stores, use `Stores.layerPg`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerPg = (options: PgOptions & BatchOptions): Layer.Layer<TraceStore, StoreError> =>
  layerSql(options).pipe(Layer.provide(databases.pg("trace", options)))
