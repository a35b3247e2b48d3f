/**
 * The stores of the wrappers, assembled: one layer that provides the
 * `TraceStore`, the `AuditStore` and the `MemoryStore` together, in memory,
 * in one SQLite file (the embedded default, `<workspace>/.ugent/ugent.db`) or
 * in one PostgreSQL database, sharing one client; and the Redis-backed stores
 * of `effect/persistence`'s `RateLimiter` and `CircuitBreaker`, so limits and
 * breaker state hold across processes and machines.
 *
 * @since 0.1.0
 */
import { type Duration, Layer } from "effect"
import { CircuitBreaker, KeyValueStore, RateLimiter, type Redis } from "effect/persistence"
import type { SqlClient } from "effect/sql"
import * as ApprovalStore from "./ApprovalStore.ts"
import * as AuditStore from "./AuditStore.ts"
import * as databases from "./internal/sql/databases.ts"
import type { PgOptions, SqliteOptions } from "./internal/sql/databases.ts"
import type { BatchOptions } from "./internal/sql/writeBehind.ts"
import * as MemoryStore from "./MemoryStore.ts"
import * as redis from "./internal/redis.ts"
import type { StoreError } from "./StoreError.ts"
import * as TraceStore from "./TraceStore.ts"

/**
 * Where the SQLite database is: `filename`, else `<workspace>/.ugent/ugent.db`,
 * where `workspace` defaults to the current directory.
 *
 * @category models
 * @since 0.1.0
 */
export type { SqliteOptions } from "./internal/sql/databases.ts"

/**
 * How to reach PostgreSQL: a URL (`postgres://user:password@host:5432/db`)
 * and, optionally, settings of `@effect/sql-pg`'s pool (for example
 * `startupParameters: { search_path: "agents" }` to keep the tables in a
 * schema of their own). PostgreSQL needs the optional package
 * `@effect/sql-pg` (`npm install @effect/sql-pg`), imported when the layer is
 * built; without it the layer fails with a `StoreError` that says so.
 *
 * @category models
 * @since 0.1.0
 */
export type { PgOptions } from "./internal/sql/databases.ts"

/**
 * How the SQL trace store batches its writes.
 *
 * @category models
 * @since 0.1.0
 */
export type { BatchOptions } from "./internal/sql/writeBehind.ts"

/**
 * What the trace store keeps (`traces`: payloads and retention, see
 * `TraceStore.TraceOptions`), beside its batching, and how the audit store
 * writes (`audit`: `AuditStore.AuditOptions`, written behind by default).
 *
 * @category models
 * @since 0.2.0
 */
export interface StoreOptions extends BatchOptions {
  readonly traces?: TraceStore.TraceOptions | undefined
  readonly audit?: AuditStore.AuditOptions | undefined
  /** How working memory forgets (`MemoryStore.MemoryPolicy`: a time to live, a size cap per caller). */
  readonly memory?: MemoryStore.MemoryPolicy | undefined
}

/**
 * The stores: traces, audit records, working memory, approval requests
 * (`ApprovalStore`, shared by every server on one database), and a key-value store
 * for caches (`effect/persistence`'s `KeyValueStore`, in the table
 * `ugent_kv` on SQL).
 *
 * @category models
 * @since 0.1.0
 */
export type Stores =
  | TraceStore.TraceStore
  | AuditStore.AuditStore
  | MemoryStore.MemoryStore
  | ApprovalStore.ApprovalStore
  | KeyValueStore.KeyValueStore

/**
 * The three stores in memory.
 *
 * **Example** (Providing every store at once)
 * ```ts
 * import { MemoryStore, Stores } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   const memory = yield* MemoryStore.MemoryStore
 *   const id = yield* memory.put({ id: "r1", tool: "git.log", content: { commits: 3 }, summary: "3 commits" })
 *   const entry = yield* memory.get(id)
 *   return [entry.kind, entry.lines, entry.content.replaceAll("\n", " ")]
 * })
 * console.log(Effect.runSync(Effect.provide(program, Stores.layerMemory())))
 * // => [ 'json', 3, '{   "commits": 3 }' ]
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory = (options?: {
  readonly traces?: TraceStore.TraceOptions | undefined
  readonly memory?: MemoryStore.MemoryPolicy | undefined
}): Layer.Layer<Stores> =>
  Layer.mergeAll(
    TraceStore.layerMemory(options?.traces),
    AuditStore.layerMemory(),
    MemoryStore.layerMemory(options?.memory),
    ApprovalStore.layerMemory(),
    KeyValueStore.layerMemory
  )

/**
 * The three stores on the `SqlClient` in context (SQLite or PostgreSQL).
 * Each brings its tables up to date when the layer is built.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql = (options?: StoreOptions): Layer.Layer<Stores, StoreError, SqlClient.SqlClient> =>
  Layer.mergeAll(
    TraceStore.layerSql({ ...options, ...options?.traces }),
    AuditStore.layerSqlWith(options?.audit ?? {}),
    MemoryStore.layerSqlWith(options?.memory),
    ApprovalStore.layerSql,
    KeyValueStore.layerSql({ table: "ugent_kv" })
  )

/**
 * The three stores in one SQLite file, on one connection: the embedded
 * default.
 *
 * **Example** (Stores in a workspace's `.ugent/ugent.db`)
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * import { Stores, TraceStore } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const workspace = mkdtempSync(join(tmpdir(), "ugent-"))
 * const record = { id: "t1", rootId: "t1", path: "file.read", input: { path: "a.txt" }, status: "success" as const, startedAt: Date.now(), durationMillis: 2, alternatives: [] }
 * const write = TraceStore.TraceStore.use((store) => store.append([record]))
 * const read = TraceStore.TraceStore.use((store) => store.get("t1"))
 * await Effect.runPromise(Effect.provide(write, Stores.layerSqlite({ workspace })))
 * const found = await Effect.runPromise(Effect.provide(read, Stores.layerSqlite({ workspace })))
 * console.log(found._tag, found._tag === "Some" && found.value.input)
 * // => Some { path: 'a.txt' }
 * rmSync(workspace, { recursive: true, force: true })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSqlite = (options: SqliteOptions & StoreOptions = {}): Layer.Layer<Stores, StoreError> =>
  layerSql(options).pipe(Layer.provide(databases.sqlite("trace", options)))

/**
 * The three stores in one PostgreSQL database, on one pool: for many agents
 * on many machines.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerPg = (options: PgOptions & StoreOptions): Layer.Layer<Stores, StoreError> =>
  layerSql(options).pipe(Layer.provide(databases.pg("trace", options)))

/**
 * Where Redis is, and the key prefix of this deployment (default `"ugent:"`;
 * the rate limiter adds `ratelimit:`, the breaker `breaker:`), so several
 * deployments can share one Redis. Redis needs the optional package `redis`
 * (`npm install redis`), imported when a Redis layer is built; without it
 * the layer fails with a `RedisError` that says so.
 *
 * The connection fails fast: a connection attempt waits at most
 * `connectTimeout` (default 1 s), a command at most `commandTimeout`
 * (default 1 s), and none waits for a reconnection. Once Redis does not
 * answer, every command fails at once until a ping in the background (one a
 * second) is answered, so a limited call never stalls on a Redis that is
 * down; what the call then does is the `OnStoreError` policy (run uncounted,
 * or refused). The layer is built whether Redis answers or not (it waits
 * for it at most `connectTimeout`), and an outage is logged once when it
 * starts and once when it ends.
 *
 * @category models
 * @since 0.1.0
 */
export interface RedisOptions {
  readonly url: string
  readonly prefix?: string | undefined
  readonly connectTimeout?: Duration.Input | undefined
  readonly commandTimeout?: Duration.Input | undefined
}

/**
 * A `RateLimiter` store in Redis: every `RateLimiter` on this store, in any
 * process, counts against the same limits. Provide it to
 * `RateLimiter.layer`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerRateLimiterRedis = (
  options: RedisOptions
): Layer.Layer<RateLimiter.RateLimiterStore, Redis.RedisError> =>
  RateLimiter.layerStoreRedis({ prefix: `${options.prefix ?? "ugent:"}ratelimit:` }).pipe(
    Layer.provide(redis.layer(options))
  )

/**
 * A `CircuitBreaker` store in Redis: breakers on this store share their state
 * (open, half-open with one probe lease, closed) across processes. Provide it
 * to `CircuitBreaker.layer`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerCircuitBreakerRedis = (
  options: RedisOptions & {
    readonly probeLease?: Duration.Input | undefined
    readonly idleTimeToLive?: Duration.Input | undefined
  }
): Layer.Layer<CircuitBreaker.CircuitBreakerStore, Redis.RedisError> =>
  CircuitBreaker.layerStoreRedis({
    prefix: `${options.prefix ?? "ugent:"}breaker:`,
    probeLease: options.probeLease,
    idleTimeToLive: options.idleTimeToLive
  }).pipe(Layer.provide(redis.layer(options)))

/**
 * Both Redis stores on one connection.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerRedis = (
  options: RedisOptions
): Layer.Layer<RateLimiter.RateLimiterStore | CircuitBreaker.CircuitBreakerStore, Redis.RedisError> =>
  Layer.mergeAll(
    RateLimiter.layerStoreRedis({ prefix: `${options.prefix ?? "ugent:"}ratelimit:` }),
    CircuitBreaker.layerStoreRedis({ prefix: `${options.prefix ?? "ugent:"}breaker:` })
  ).pipe(Layer.provide(redis.layer(options)))

/**
 * The fail-fast Redis connection itself (see {@link RedisOptions}), for
 * other stores that share it: the limiter and breaker stores over it, and a
 * room's session state (`SessionState.layerRedis` of `@ugent/agentese`).
 *
 * @category layers
 * @since 0.2.0
 */
export const layerRedisConnection = (options: RedisOptions): Layer.Layer<Redis.Redis, Redis.RedisError> =>
  redis.layer(options)

/**
 * Both Redis stores over the connection in context.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerRedisOn = (options: {
  readonly prefix?: string | undefined
}): Layer.Layer<RateLimiter.RateLimiterStore | CircuitBreaker.CircuitBreakerStore, never, Redis.Redis> =>
  Layer.mergeAll(
    RateLimiter.layerStoreRedis({ prefix: `${options.prefix ?? "ugent:"}ratelimit:` }),
    CircuitBreaker.layerStoreRedis({ prefix: `${options.prefix ?? "ugent:"}breaker:` })
  )
