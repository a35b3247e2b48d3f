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
 * Every backend keeps traces bounded (see {@link TraceOptions}): a payload
 * (input, output, error) whose JSON text is longer than 1,536 characters is
 * kept as its head, with its full size and SHA-256 (`clipped`), unless full
 * payloads are asked for; and records older than 7 days, or the oldest past
 * 200 MB of records, are removed.
 *
 * @since 0.1.0
 */
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import type { SqlClient } from "effect/sql"
import * as databases from "./internal/sql/databases.ts"
import type { PgOptions, SqliteOptions } from "./internal/sql/databases.ts"
import type { BatchOptions } from "./internal/sql/writeBehind.ts"
import type { Pruned, TraceOptions, TraceRecord, TraceStoreShape } from "./internal/traceModel.ts"
import * as sqlStore from "./internal/sql/traceStore.ts"
import * as payload from "./internal/tracePayload.ts"
import type { StoreError } from "./StoreError.ts"

/**
 * How a traced call ended.
 *
 * @category schemas
 * @since 0.1.0
 */
export { TraceStatus } from "./internal/traceModel.ts"

/**
 * What a store kept of a payload it cut to its head: the size in bytes of its
 * whole JSON text (UTF-8) and that text's SHA-256, in hex.
 *
 * @category schemas
 * @since 0.2.0
 */
export { Clipped } from "./internal/traceModel.ts"

/**
 * One traced call. Times are epoch milliseconds; `input`, `output` and `error`
 * are the JSON forms the tool's schemas encode (the error as
 * `ToolError.toJson` gives it). A root call has `rootId === id` and no
 * `parentId`. A payload the store cut to its head is named in `clipped`
 * (with its full size and hash), and its field then holds the first
 * characters of its JSON text, as a string.
 *
 * @category schemas
 * @since 0.1.0
 */
export { TraceRecord } from "./internal/traceModel.ts"

/**
 * What {@link TraceStoreShape.recent} returns: the newest records first,
 * optionally of one path only.
 *
 * @category models
 * @since 0.1.0
 */
export type { RecentQuery } from "./internal/traceModel.ts"

/**
 * How long a trace store keeps records: those that started more than `maxAge`
 * ago, and the oldest past `maxBytes` of records, are removed, oldest first.
 * A record's size is what its row holds (payloads as kept, the other fields,
 * and what the indexes repeat of its ids and path): on SQLite, within about
 * 15% of what the table and its indexes take on disk. Defaults: 7 days and
 * 200 MB. `Duration.infinity` and `Infinity` turn a bound off.
 *
 * @category models
 * @since 0.2.0
 */
export type { Retention } from "./internal/traceModel.ts"

/**
 * What a trace store keeps. `payloads`: `"head"` (default) keeps a payload
 * longer than `headChars` (default 1,536) characters of JSON as its head, its
 * size and its hash; `"full"` keeps every payload whole. `retention` bounds
 * the store by age and size ({@link Retention}); `false` keeps everything.
 * The SQL stores enforce it when they open and then, while records are
 * written, once a minute or after a twentieth of `maxBytes` is written; the
 * memory store on every append.
 *
 * @category models
 * @since 0.2.0
 */
export type { TraceOptions } from "./internal/traceModel.ts"

/**
 * The defaults: heads of 1,536 characters, records kept 7 days and up to 200 MB.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaults: {
  readonly payloads: "head"
  readonly headChars: number
  readonly retention: { readonly maxAge: Duration.Duration; readonly maxBytes: number }
} = payload.defaults

/**
 * What {@link TraceStoreShape.prune} removed.
 *
 * @category models
 * @since 0.2.0
 */
export type { Pruned } from "./internal/traceModel.ts"

/**
 * The operations of a trace store. Lists come back in a fixed order on every
 * backend: `children` and `byRoot` oldest first (by `startedAt`, then `id`),
 * `recent` newest first.
 *
 * @category models
 * @since 0.1.0
 */
export type { TraceStoreShape } from "./internal/traceModel.ts"

/**
 * The trace store service.
 *
 * **Example** (Appending and reading a call tree)
 * ```ts
 * import { TraceStore } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   const store = yield* TraceStore.TraceStore
 *   const call = { input: {}, status: "success" as const, startedAt: Date.now(), durationMillis: 1, alternatives: [] }
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
 * 100,000), forgets the oldest appended first, and keeps payloads and
 * retention as {@link TraceOptions} say, on every append.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeMemory = (options?: TraceOptions & { readonly capacity?: number | undefined }): TraceStoreShape => {
  const capacity = options?.capacity ?? 100_000
  const { policy, maxAgeMillis, maxBytes } = payload.resolve(options)
  const records = new Map<string, { readonly record: TraceRecord; readonly bytes: number }>()
  const byParent = new Map<string, Set<string>>()
  const byRootId = new Map<string, Set<string>>()
  let bytes = 0
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
  const remove = (id: string) => {
    const found = records.get(id)
    if (found === undefined) return
    records.delete(id)
    bytes -= found.bytes
    if (found.record.parentId !== undefined) unindex(byParent, found.record.parentId, id)
    unindex(byRootId, found.record.rootId, id)
  }
  const lookup = (ids: Set<string> | undefined): ReadonlyArray<TraceRecord> => {
    if (ids === undefined) return []
    const out: Array<TraceRecord> = []
    for (const id of ids) {
      const found = records.get(id)
      if (found !== undefined) out.push(found.record)
    }
    return out.sort(byStart)
  }
  // Records come in about the order they start: the map's oldest entries go first.
  const prune = (now: number): Pruned => {
    let byAge = 0
    let bySize = 0
    const cutoff = now - maxAgeMillis
    for (const [id, { record }] of records) {
      if (record.startedAt >= cutoff) break
      remove(id)
      byAge++
    }
    for (const id of records.keys()) {
      if (bytes <= maxBytes && records.size <= capacity) break
      remove(id)
      bySize++
    }
    return { byAge, bySize }
  }
  return {
    append: (batch) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          for (const given of batch) {
            if (records.has(given.id)) continue
            const kept = payload.store(given, policy)
            records.set(given.id, { record: kept.record, bytes: kept.bytes })
            bytes += kept.bytes
            if (given.parentId !== undefined) index(byParent, given.parentId, given.id)
            index(byRootId, given.rootId, given.id)
          }
          prune(now)
        })
      ),
    flush: Effect.void,
    get: (id) => Effect.sync(() => Option.fromNullishOr(records.get(id)?.record)),
    children: (id) => Effect.sync(() => lookup(byParent.get(id))),
    byRoot: (rootId) => Effect.sync(() => lookup(byRootId.get(rootId))),
    recent: ({ limit, path }) =>
      Effect.sync(() => {
        const all: Array<TraceRecord> = []
        for (const { record } of records.values()) if (path === undefined || record.path === path) all.push(record)
        return all.sort((a, b) => byStart(b, a)).slice(0, Math.max(0, limit))
      }),
    prune: Effect.map(Clock.currentTimeMillis, prune)
  }
}

/**
 * A fresh in-memory trace store (see {@link makeMemory}).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory = (
  options?: TraceOptions & { readonly capacity?: number | undefined }
): Layer.Layer<TraceStore> => Layer.sync(TraceStore, () => TraceStore.of(makeMemory(options)))

/**
 * A trace store on the `SqlClient` in context (SQLite or PostgreSQL). It
 * brings its table up to date when built, batches appends (see
 * `Stores.BatchOptions`) and writes what is pending before its scope closes.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql = (
  options?: BatchOptions & TraceOptions
): Layer.Layer<TraceStore, StoreError, SqlClient.SqlClient> =>
  Layer.effect(TraceStore, Effect.map(sqlStore.make(options), TraceStore.of))

/**
 * A trace store in a SQLite file (default `<cwd>/.ugent/ugent.db`). Every
 * client of one file in one process shares one connection; to build all
 * three stores at once, use `Stores.layerSqlite`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSqlite = (
  options: SqliteOptions & BatchOptions & TraceOptions = {}
): Layer.Layer<TraceStore, StoreError> => layerSql(options).pipe(Layer.provide(databases.sqlite("trace", options)))

/**
 * A trace store in PostgreSQL, on its own pool. To share one pool with the
 * other stores, use `Stores.layerPg`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerPg = (options: PgOptions & BatchOptions & TraceOptions): Layer.Layer<TraceStore, StoreError> =>
  layerSql(options).pipe(Layer.provide(databases.pg("trace", options)))
