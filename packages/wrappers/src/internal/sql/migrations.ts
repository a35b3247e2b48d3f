// The schema of the SQL stores, as effect/sql migrations: one migrations table
// per store, so each store can live alone in a database. The same migrations
// run on SQLite and PostgreSQL; where the dialects differ (`double precision`,
// `COLLATE "C"` so PostgreSQL orders ids and keys like SQLite and JavaScript
// do, whatever the database's locale) the statement asks the client which
// dialect it speaks.
import { Effect, Schedule } from "effect"
import { Migrator, SqlClient, SqlError } from "effect/sql"
import { StoreError } from "../../StoreError.ts"

/** `double precision` on PostgreSQL, `REAL` on SQLite. */
const real = (sql: SqlClient.SqlClient) =>
  sql.literal(sql.onDialectOrElse({ pg: () => "DOUBLE PRECISION", orElse: () => "REAL" }))

/** A text column that sorts by code point on every dialect. */
const key = (sql: SqlClient.SqlClient) =>
  sql.literal(sql.onDialectOrElse({ pg: () => 'TEXT COLLATE "C"', orElse: () => "TEXT" }))

const traces = {
  "1_create_traces": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE ugent_traces (
      id ${key(sql)} PRIMARY KEY,
      parent_id TEXT,
      root_id TEXT NOT NULL,
      path TEXT NOT NULL,
      input TEXT NOT NULL,
      output TEXT,
      error TEXT,
      status TEXT NOT NULL,
      started_at ${real(sql)} NOT NULL,
      duration_millis ${real(sql)} NOT NULL,
      alternatives TEXT NOT NULL,
      observer_id TEXT,
      session_id TEXT
    )`
    yield* sql`CREATE INDEX ugent_traces_parent ON ugent_traces (parent_id, started_at, id)`
    yield* sql`CREATE INDEX ugent_traces_root ON ugent_traces (root_id, started_at, id)`
    yield* sql`CREATE INDEX ugent_traces_started ON ugent_traces (started_at, id)`
    yield* sql`CREATE INDEX ugent_traces_path ON ugent_traces (path, started_at, id)`
  }),
  // Bounded payloads and retention: which payloads were cut to their head (with size and hash), each row's size,
  // and an index that answers "the newest rows up to N bytes" without reading the rows.
  "2_bound_payloads": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ugent_traces ADD COLUMN clipped TEXT`
    yield* sql`ALTER TABLE ugent_traces ADD COLUMN bytes INTEGER`
    // As tracePayload.ts counts a row: its texts, and what its indexes repeat of its ids and path.
    yield* sql`UPDATE ugent_traces SET bytes = 120 + 3 * LENGTH(id) + 2 * LENGTH(root_id)
      + 2 * COALESCE(LENGTH(parent_id), 0) + 2 * LENGTH(path) + LENGTH(input) + COALESCE(LENGTH(output), 0)
      + COALESCE(LENGTH(error), 0) + LENGTH(alternatives) + COALESCE(LENGTH(observer_id), 0)
      + COALESCE(LENGTH(session_id), 0)`
    yield* sql`DROP INDEX ugent_traces_started`
    yield* sql`CREATE INDEX ugent_traces_started ON ugent_traces (started_at, id, bytes)`
  }),
  // The client's own id of a call (an MCP client's tool-use id), so an operator can join its records with ours.
  "3_add_client_call_id": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ugent_traces ADD COLUMN client_call_id TEXT`
  }),
  // The server that served a call, in a room of several; NULL on older rows and single servers.
  "4_add_instance": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ugent_traces ADD COLUMN instance TEXT`
  })
}

const audit = {
  "1_create_audit": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE ugent_audit (
      id ${key(sql)} PRIMARY KEY,
      call_id TEXT NOT NULL,
      phase TEXT NOT NULL,
      at ${real(sql)} NOT NULL,
      observer_id ${key(sql)} NOT NULL,
      path ${key(sql)} NOT NULL,
      input_summary TEXT NOT NULL,
      status TEXT NOT NULL,
      duration_millis ${real(sql)},
      error_tag TEXT,
      error_message TEXT,
      result_summary TEXT,
      estimated_tokens ${real(sql)}
    )`
    yield* sql`CREATE INDEX ugent_audit_at ON ugent_audit (at, id)`
    yield* sql`CREATE INDEX ugent_audit_path ON ugent_audit (path, at)`
    yield* sql`CREATE INDEX ugent_audit_observer ON ugent_audit (observer_id, at)`
    yield* sql`CREATE INDEX ugent_audit_call ON ugent_audit (call_id)`
  }),
  // The failure's kind (denied, rate_limited, not_found…), so refusals can be counted; NULL on older entries.
  "2_add_error_kind": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ugent_audit ADD COLUMN error_kind TEXT`
  }),
  // The client's own id of a call (an MCP client's tool-use id); NULL on older entries and other projections.
  "3_add_client_call_id": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ugent_audit ADD COLUMN client_call_id TEXT`
  }),
  // The server that served a call, in a room of several; NULL on older entries and single servers.
  "4_add_instance": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ugent_audit ADD COLUMN instance TEXT`
  })
}

const memory = {
  "1_create_memory": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE ugent_memory (
      id ${key(sql)} PRIMARY KEY,
      tool TEXT NOT NULL,
      kind TEXT NOT NULL,
      summary TEXT NOT NULL,
      content TEXT NOT NULL,
      size INTEGER NOT NULL,
      lines INTEGER NOT NULL,
      created_at ${real(sql)} NOT NULL
    )`
    yield* sql`CREATE INDEX ugent_memory_created ON ugent_memory (created_at, id)`
    yield* sql`CREATE INDEX ugent_memory_tool ON ugent_memory (tool, created_at, id)`
  }),
  // The observer an entry belongs to (NULL: no one in particular), so each caller lists and reads its own.
  "2_add_owner": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ugent_memory ADD COLUMN owner TEXT`
    yield* sql`CREATE INDEX ugent_memory_owner ON ugent_memory (owner, created_at, id)`
  }),
  // Forgetting: when an entry was last used (the least recently used go first past a caller's cap), when it
  // expires, and the file it was kept from with that file's hash then (a read after the file changed says so).
  "3_add_usage": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ugent_memory ADD COLUMN used_at ${real(sql)}`
    yield* sql`ALTER TABLE ugent_memory ADD COLUMN expires_at ${real(sql)}`
    yield* sql`ALTER TABLE ugent_memory ADD COLUMN source_path TEXT`
    yield* sql`ALTER TABLE ugent_memory ADD COLUMN source_hash TEXT`
    yield* sql`CREATE INDEX ugent_memory_expires ON ugent_memory (expires_at)`
  })
}

const approvals = {
  // One row per approval request: the call's key, what the person was shown, the files' hashes (JSON), its state.
  "1_create_approvals": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE ugent_approvals (
      id ${key(sql)} PRIMARY KEY,
      call_key ${key(sql)} NOT NULL,
      tool TEXT NOT NULL,
      observer_id TEXT NOT NULL,
      input TEXT NOT NULL,
      arguments TEXT NOT NULL,
      text TEXT NOT NULL,
      preview TEXT,
      files TEXT NOT NULL,
      status TEXT NOT NULL,
      created_at ${real(sql)} NOT NULL,
      expires_at ${real(sql)} NOT NULL,
      answered_at ${real(sql)},
      answered_by TEXT
    )`
    yield* sql`CREATE INDEX ugent_approvals_key ON ugent_approvals (call_key, created_at)`
    yield* sql`CREATE INDEX ugent_approvals_status ON ugent_approvals (status, created_at)`
  })
}

const sets = { trace: traces, audit, memory, approvals } as const

const run = Migrator.make({})

/**
 * A lock another process holds. The migrator reads the migrations table, then
 * writes it, in one deferred transaction; on SQLite a writer that commits in
 * between makes that upgrade fail at once with SQLITE_BUSY (the busy timeout
 * does not apply, as waiting could deadlock), so the whole run is retried.
 */
const lockedByAnother = (error: Migrator.MigrationError | SqlError.SqlError): boolean => {
  const sql = SqlError.isSqlError(error) ? error : SqlError.isSqlError(error.cause) ? error.cause : undefined
  return sql?.reason._tag === "LockTimeoutError"
}

/** About 5 s in all: many processes starting on one workspace (editors, CLI calls) each get their turn. */
const whileLocked = Schedule.min([Schedule.exponential("5 millis", 1.5), Schedule.spaced("500 millis")]).pipe(
  Schedule.jittered,
  Schedule.upTo({ duration: "5 seconds" })
)

/** Brings the store's tables up to date; safe to run from several processes at once. */
export const migrate = (store: keyof typeof sets): Effect.Effect<void, StoreError, SqlClient.SqlClient> =>
  run({ loader: Migrator.fromRecord(sets[store]), table: `ugent_${store}_migrations` }).pipe(
    Effect.retry({ schedule: whileLocked, while: lockedByAnother }),
    Effect.asVoid,
    Effect.mapError((cause) => new StoreError({ store, operation: "migrate its tables", detail: cause.message, cause }))
  )
