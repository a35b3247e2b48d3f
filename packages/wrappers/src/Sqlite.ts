/**
 * An `effect/sql` client for SQLite on Node's built-in `node:sqlite`: the
 * embedded database of the stores. It provides `SqlClient.SqlClient`, so
 * code written against `effect/sql` (statements, `sql.insert`,
 * transactions, `Migrator`) runs on it unchanged.
 *
 * It exists because no SQLite driver for Effect 4.1 is published yet; replace
 * it with `@effect/sql-sqlite-node` once a 4.x release is stable.
 *
 * @since 0.1.0
 */
import { mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import type { DatabaseSync } from "node:sqlite"
import { Context, Effect, Layer, type Scope, Semaphore } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, type SqlConnection, type SqlError, Statement } from "effect/sql"
import { makeConnection, sqlError } from "./internal/sql/sqliteConnection.ts"

/**
 * How to open the database.
 *
 * @category models
 * @since 0.1.0
 */
export interface SqliteClientConfig {
  /** A file path (its directory is created), or `":memory:"`. */
  readonly filename: string
  readonly readonly?: boolean | undefined
  /** How long a statement waits for another process's lock, in milliseconds. Default 5000. */
  readonly busyTimeoutMillis?: number | undefined
  /** How many prepared statements the connection keeps. Default 200. */
  readonly preparedStatementCacheSize?: number | undefined
  readonly spanAttributes?: Record<string, unknown> | undefined
  readonly transformResultNames?: ((name: string) => string) | undefined
  readonly transformQueryNames?: ((name: string) => string) | undefined
}

/**
 * A SQLite client: an `effect/sql` client plus its configuration.
 *
 * @category models
 * @since 0.1.0
 */
export interface SqliteClientShape extends SqlClient.SqlClient {
  readonly config: SqliteClientConfig
}

/**
 * The SQLite client service (also provided as `SqlClient.SqlClient`).
 *
 * @category services
 * @since 0.1.0
 */
export class SqliteClient extends Context.Service<SqliteClient, SqliteClientShape>()("ugent/SqliteClient") {}

/**
 * Opens the database for the life of the scope. Clients on the same file in
 * one process share one connection (and take turns through one semaphore),
 * so they never wait on each other's locks. A file database runs in WAL
 * mode with `synchronous = NORMAL`: a commit does not wait for the disk, and
 * readers never block the writer; a crash may lose the last transactions but
 * never corrupts the file.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  config: SqliteClientConfig
): Effect.Effect<SqliteClientShape, SqlError.SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const { db, connection, semaphore } = yield* shared(config)
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore,
      isTransaction: () => db.isTransaction
    })
    const compiler = Statement.makeCompilerSqlite(config.transformQueryNames)
    const client = yield* SqlClient.make({
      acquirer: acquirers.acquirer,
      borrower: acquirers.borrower,
      transactionAcquirer: acquirers.transactionAcquirer,
      onCommitFailure: acquirers.onCommitFailure,
      isTransaction: acquirers.isTransaction,
      compiler,
      driver: "ugent-sqlite",
      prepareTransactionControls: true,
      spanAttributes: [...Object.entries(config.spanAttributes ?? {}), ["db.system.name", "sqlite"]],
      transformRows: config.transformResultNames
        ? Statement.defaultTransforms(config.transformResultNames).array
        : undefined
    })
    return Object.assign(client, { config })
  })

interface Handle {
  readonly db: DatabaseSync
  readonly connection: SqlConnection.Connection
  readonly semaphore: Semaphore.Semaphore
  users: number
}

// One connection per file per process, shared by every client on it: a
// `node:sqlite` call that waits for a lock blocks the whole thread, so a second
// connection in the same process could wait for a transaction that cannot
// finish until it returns. Sharing turns that wait into a semaphore's.
const handles = new Map<string, Handle>()

const shared = (config: SqliteClientConfig): Effect.Effect<Handle, SqlError.SqlError, Scope.Scope> => {
  const memory = config.filename === ":memory:" || config.filename === ""
  const key = memory ? undefined : `${config.readonly === true ? "ro" : "rw"}:${resolve(config.filename)}`
  return Effect.acquireRelease(
    Effect.try({
      try: () => {
        const existing = key === undefined ? undefined : handles.get(key)
        if (existing !== undefined) {
          existing.users++
          return existing
        }
        const db = open(config, memory)
        const handle: Handle = {
          db,
          connection: makeConnection(db, config.preparedStatementCacheSize ?? 200),
          semaphore: Semaphore.makeUnsafe(1),
          users: 1
        }
        if (key !== undefined) handles.set(key, handle)
        return handle
      },
      catch: (cause) => sqlError(cause, "open", `Failed to open SQLite database ${config.filename}`)
    }),
    (handle) =>
      Effect.sync(() => {
        if (--handle.users > 0) return
        if (key !== undefined) handles.delete(key)
        if (handle.db.isOpen) handle.db.close()
      })
  )
}

/**
 * Node's SQLite, taken when a database is opened: a static import would stop
 * every package from loading on a Node without it, before the version check
 * of `@ugent/core` could say which Node is needed.
 */
const sqlite = (): typeof import("node:sqlite") => process.getBuiltinModule("node:sqlite")

const open = (config: SqliteClientConfig, memory: boolean): DatabaseSync => {
  const { DatabaseSync } = sqlite()
  if (!memory && config.readonly !== true) mkdirSync(dirname(config.filename), { recursive: true })
  const db = new DatabaseSync(config.filename, {
    readOnly: config.readonly ?? false,
    timeout: config.busyTimeoutMillis ?? 5000
  })
  try {
    if (!memory && config.readonly !== true) walMode(db, config.busyTimeoutMillis ?? 5000)
    db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
  } catch (cause) {
    db.close()
    throw cause
  }
  return db
}

/**
 * Switches a database to WAL, waiting out another process's lock: where
 * waiting could deadlock (several processes opening one fresh database at
 * once, one of them already reading), SQLite answers "database is locked" at
 * once instead of calling its busy handler, so the pragma is tried again
 * here, a few milliseconds apart, until the busy timeout.
 */
const walMode = (db: DatabaseSync, timeoutMillis: number) => {
  const deadline = Date.now() + timeoutMillis
  for (;;) {
    try {
      db.exec("PRAGMA journal_mode = WAL")
      return
    } catch (cause) {
      const busy = (cause as { readonly errcode?: number }).errcode === 5 || /database is locked/.test(String(cause))
      if (!busy || Date.now() > deadline) throw cause
      Atomics.wait(pause, 0, 0, 10)
    }
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * A layer that opens the database, providing `SqliteClient` and
 * `SqlClient.SqlClient`.
 *
 * **Example** (Querying through effect/sql)
 * ```ts
 * import { Sqlite } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * import { SqlClient } from "effect/sql"
 * const program = Effect.gen(function* () {
 *   const sql = yield* SqlClient.SqlClient
 *   yield* sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)`
 *   yield* sql`INSERT INTO notes ${sql.insert([{ text: "first" }, { text: "second" }])}`
 *   return yield* sql<{ text: string }>`SELECT text FROM notes WHERE id = ${2}`
 * })
 * const rows = await Effect.runPromise(Effect.provide(program, Sqlite.layer({ filename: ":memory:" })))
 * console.log(rows.map((r) => r.text))
 * // => [ 'second' ]
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (config: SqliteClientConfig): Layer.Layer<SqliteClient | SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.effectContext(
    Effect.map(make(config), (client) =>
      Context.make(SqliteClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    )
  ).pipe(Layer.provide(Reactivity.layer))
