// Opens the database a SQL store layer talks to, reporting a failure to open
// as the store's own StoreError rather than a driver error.
import { join } from "node:path"
import type { ConnectionOptions } from "node:tls"
import type { PgClient } from "@effect/sql-pg"
import { Context, type Duration, Effect, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, type SqlError } from "effect/sql"
import * as Sqlite from "../../Sqlite.ts"
import { StoreError, type StoreName } from "../../StoreError.ts"
import { importOptional } from "../optional.ts"
import * as OffThread from "./offThread.ts"
import * as WriteBehind from "./writeBehind.ts"

// How to reach PostgreSQL (documented as `Stores.PgOptions`).
export interface PgOptions {
  readonly url: string | Redacted.Redacted
  readonly ssl?: boolean | ConnectionOptions | undefined
  readonly connectTimeout?: Duration.Input | undefined
  readonly keepAlive?: Duration.Input | undefined
  readonly applicationName?: string | undefined
  /** Session settings sent with every connection, e.g. `{ search_path: "agents" }`. */
  readonly startupParameters?: Readonly<Record<string, string>> | undefined
  readonly spanAttributes?: Record<string, unknown> | undefined
  readonly maxConnections?: number | undefined
  readonly minConnections?: number | undefined
  readonly idleTimeout?: Duration.Input | undefined
  readonly connectionTTL?: Duration.Input | undefined
  /** Caches prepared statements (default true); turn off behind poolers that cannot keep them. */
  readonly prepare?: boolean | undefined
}

// Where the SQLite file is (documented as `Stores.SqliteOptions`).
export interface SqliteOptions {
  readonly filename?: string | undefined
  readonly workspace?: string | undefined
  /** How long a write waits for another process's lock, in milliseconds. Default 5000. */
  readonly busyTimeoutMillis?: number | undefined
}

/** `<workspace>/.ugent/ugent.db`, the embedded default. */
export const sqliteFile = (workspace: string): string => join(workspace, ".ugent", "ugent.db")

const opened = (store: StoreName, what: string) => (cause: SqlError.SqlError) =>
  new StoreError({ store, operation: `open ${what}`, detail: cause.message, cause })

export const sqlite = (store: StoreName, options: SqliteOptions): Layer.Layer<SqlClient.SqlClient, StoreError> => {
  const filename = options.filename ?? sqliteFile(options.workspace ?? process.cwd())
  return Layer.effectContext(
    Effect.gen(function* () {
      const client = yield* Sqlite.make({ ...options, filename }).pipe(
        Effect.mapError(opened(store, `the SQLite database ${filename}`))
      )
      const context = Context.make(SqlClient.SqlClient, client)
      // A file's batches are written by a thread of their own (an in-memory database lives in this one only).
      if (filename === ":memory:" || filename === "") return context
      const writer = yield* OffThread.make(filename, options.busyTimeoutMillis ?? 5000)
      return Context.add(context, WriteBehind.OffThread, writer)
    })
  ).pipe(Layer.provide(Reactivity.layer))
}

// `@effect/sql-pg` is an optional peer dependency, imported when a PostgreSQL store is built.
export const pg = (store: StoreName, options: PgOptions): Layer.Layer<SqlClient.SqlClient, StoreError> => {
  const url = typeof options.url === "string" ? Redacted.make(options.url) : options.url
  return Layer.effectContext(
    importOptional("@effect/sql-pg", "A PostgreSQL store", () => import("@effect/sql-pg")).pipe(
      Effect.mapError(
        (cause) => new StoreError({ store, operation: "open a PostgreSQL connection", detail: cause.message, cause })
      ),
      Effect.flatMap(({ PgClient }) =>
        PgClient.make({ ...options, url } satisfies PgClient.PgPoolConfig).pipe(
          Effect.mapError(opened(store, "a PostgreSQL connection"))
        )
      ),
      Effect.map((client) => Context.make(SqlClient.SqlClient, client))
    )
  ).pipe(Layer.provide(Reactivity.layer))
}
