/**
 * The backends every store suite runs on: memory, a SQLite file in a temp
 * dir, and PostgreSQL in a schema of its own (dropped afterwards). The
 * servers come from `UGENT_PG_URL` / `UGENT_REDIS_URL`; without them the
 * server suites skip with the reason in their name, except under CI, where
 * they run and fail.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { ApprovalStore, AuditStore, MemoryStore, Sqlite, Stores, TraceStore } from "@ugent/wrappers"
import { Effect, Layer, Redacted, type Scope } from "effect"
import { KeyValueStore } from "effect/persistence"
import type { SqlClient } from "effect/sql"

export const pgUrl = process.env.UGENT_PG_URL
export const redisUrl = process.env.UGENT_REDIS_URL
const ci = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false"

/** The reason a server suite skips, or `undefined` when it runs (always under CI). */
export const skipReason = (variable: "UGENT_PG_URL" | "UGENT_REDIS_URL"): string | undefined => {
  if (process.env[variable] !== undefined || ci) return undefined
  const reason = `skipped: ${variable} is not set (run .ci/services.sh)`
  console.warn(`store tests: ${reason}`)
  return reason
}

/** The URL of a server, failing the test with the reason when it is missing (under CI). */
export const required = (variable: "UGENT_PG_URL" | "UGENT_REDIS_URL"): string => {
  const url = process.env[variable]
  if (url === undefined) throw new Error(`${variable} is not set; CI must start the servers with .ci/services.sh`)
  return url
}

/**
 * What the suites open stores with unless they say otherwise: no retention, as their records carry
 * made-up start times (the retention suites give their own).
 */
const suiteOptions = (options?: Stores.StoreOptions): Stores.StoreOptions => ({
  ...options,
  traces: { retention: false, ...options?.traces }
})

/** One database: `open` builds store layers on it, each with its own connection. */
export interface Database {
  readonly open: (options?: Stores.StoreOptions) => Layer.Layer<Stores.Stores, unknown>
  /** Whether the data outlives a layer (false for memory). */
  readonly durable: boolean
  /** A plain client on the database, to shape it by hand (SQL backends only). */
  readonly client?: () => Layer.Layer<SqlClient.SqlClient, unknown>
}

export interface Backend {
  readonly name: string
  /** A fresh, empty database for the life of the scope. */
  readonly database: Effect.Effect<Database, unknown, Scope.Scope>
}

export const memory: Backend = {
  name: "memory",
  database: Effect.sync(() => {
    // One set of stores per database, so "reopening" sees the same data (the trace store as first opened).
    let traces: TraceStore.TraceStoreShape | undefined
    const audit = AuditStore.makeMemory()
    let memory: MemoryStore.MemoryStoreShape | undefined
    const approvals = ApprovalStore.makeMemory()
    const kv = Effect.runSync(Effect.scoped(Layer.build(KeyValueStore.layerMemory)))
    const open = (options?: Stores.StoreOptions) => {
      traces ??= TraceStore.makeMemory(suiteOptions(options).traces)
      memory ??= MemoryStore.makeMemory(options?.memory)
      return Layer.mergeAll(
        Layer.succeed(TraceStore.TraceStore, traces),
        Layer.succeed(AuditStore.AuditStore, audit),
        Layer.succeed(MemoryStore.MemoryStore, memory),
        Layer.succeed(ApprovalStore.ApprovalStore, approvals),
        Layer.succeedContext(kv)
      )
    }
    return { open, durable: false }
  })
}

export const sqlite: Backend = {
  name: "sqlite",
  database: Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "ugent-stores-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  ).pipe(
    Effect.map((dir) => ({
      open: (options?: Stores.StoreOptions) =>
        Stores.layerSqlite({ ...suiteOptions(options), filename: join(dir, "ugent.db") }),
      durable: true,
      client: () => Sqlite.layer({ filename: join(dir, "ugent.db") })
    }))
  )
}

const admin = (url: string) => PgClient.layer({ url: Redacted.make(url) })

export const postgres: Backend = {
  name: "postgres",
  database: Effect.suspend(() => {
    const url = required("UGENT_PG_URL")
    const schema = `ugent_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
    return Effect.acquireRelease(
      PgClient.PgClient.use((sql) => sql`CREATE SCHEMA ${sql(schema)}`).pipe(Effect.provide(admin(url))),
      () =>
        PgClient.PgClient.use((sql) => sql`DROP SCHEMA ${sql(schema)} CASCADE`).pipe(
          Effect.provide(admin(url)),
          Effect.orDie
        )
    ).pipe(
      Effect.as({
        open: (options?: Stores.StoreOptions) =>
          Stores.layerPg({
            ...suiteOptions(options),
            url,
            maxConnections: 4,
            startupParameters: { search_path: schema }
          }),
        durable: true,
        client: () =>
          PgClient.layer({ url: Redacted.make(url), maxConnections: 1, startupParameters: { search_path: schema } })
      })
    )
  })
}

/** The backends that run here: all of them, or without PostgreSQL when it is not configured (outside CI). */
export const backends: ReadonlyArray<{ readonly backend: Backend; readonly skip: string | undefined }> = [
  { backend: memory, skip: undefined },
  { backend: sqlite, skip: undefined },
  { backend: postgres, skip: skipReason("UGENT_PG_URL") }
]

/** Runs `f` with fresh stores of the backend, closing them (and removing the database) after. */
export const withStores = <A, E>(
  backend: Backend,
  f: Effect.Effect<A, E, Stores.Stores>,
  options?: Stores.StoreOptions
): Effect.Effect<A, unknown> =>
  Effect.scoped(Effect.flatMap(backend.database, (db) => Effect.provide(f, db.open(options))))
