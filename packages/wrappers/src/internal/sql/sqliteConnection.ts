// The effect/sql `Connection` over one `node:sqlite` DatabaseSync: compiled SQL
// and positional parameters in, rows out, with a bounded cache of prepared
// statements. All calls are synchronous; the client serializes them with a
// semaphore, as SQLite allows one writer per connection anyway.
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite"
import { Effect, Stream } from "effect"
import { type SqlConnection, SqlError } from "effect/sql"

type Transform = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

/** Turns what the statement compiler emits into what `node:sqlite` binds. */
export const toInput = (value: unknown): SQLInputValue => {
  switch (typeof value) {
    case "string":
    case "number":
    case "bigint":
      return value
    case "boolean":
      return value ? 1 : 0
    case "undefined":
      return null
    default:
      if (value === null || value instanceof Uint8Array) return value
      if (value instanceof Date) return value.toISOString()
      return JSON.stringify(value)
  }
}

const toInputs = (params: ReadonlyArray<unknown>): Array<SQLInputValue> => params.map(toInput)

/**
 * `node:sqlite` names the SQLite result code `errcode`; effect's classifier
 * reads `errno`, so give it a view with both (the original stays the cause).
 */
export const sqlError = (cause: unknown, operation: string, message: string): SqlError.SqlError => {
  const errcode = (cause as { readonly errcode?: unknown } | null)?.errcode
  const classified =
    typeof errcode === "number"
      ? SqlError.classifySqliteError(Object.assign(Object.create(cause as object) as object, { errno: errcode }), {
          message: `${message}: ${(cause as Error).message}`,
          operation
        })
      : SqlError.classifySqliteError(cause, {
          message: `${message}: ${String((cause as Error)?.message ?? cause)}`,
          operation
        })
  return new SqlError.SqlError({ reason: classified })
}

export const makeConnection = (
  db: DatabaseSync,
  cacheSize: number
): SqlConnection.Connection & { readonly statements: Map<string, StatementSync> } => {
  // Insertion-ordered map used as an LRU: a hit moves the statement to the end.
  const statements = new Map<string, StatementSync>()
  const prepared = (sql: string): StatementSync => {
    const cached = statements.get(sql)
    if (cached !== undefined) {
      statements.delete(sql)
      statements.set(sql, cached)
      return cached
    }
    const statement = db.prepare(sql)
    statements.set(sql, statement)
    if (statements.size > cacheSize) {
      const oldest = statements.keys().next().value
      if (oldest !== undefined) statements.delete(oldest)
    }
    return statement
  }

  const run = <A>(operation: string, f: () => A): Effect.Effect<A, SqlError.SqlError> =>
    Effect.try({ try: f, catch: (cause) => sqlError(cause, operation, "Failed to execute statement") })

  const rows = (statement: StatementSync, params: ReadonlyArray<unknown>, transform: Transform) => {
    const result = statement.all(...toInputs(params)) as ReadonlyArray<object>
    return transform === undefined ? result : transform(result)
  }

  const values = (statement: StatementSync, params: ReadonlyArray<unknown>) => {
    statement.setReturnArrays(true)
    try {
      // node:sqlite types `all()` as objects whatever `setReturnArrays` says; with it on, each row is an array.
      return statement.all(...toInputs(params)) as unknown as ReadonlyArray<ReadonlyArray<unknown>>
    } finally {
      statement.setReturnArrays(false)
    }
  }

  return {
    statements,
    execute: (sql, params, transform) => run("execute", () => rows(prepared(sql), params, transform)),
    executeRaw: (sql, params) => run("executeRaw", () => prepared(sql).run(...toInputs(params))),
    executeValues: (sql, params) => run("executeValues", () => values(prepared(sql), params)),
    executeValuesUnprepared: (sql, params) => run("executeValues", () => values(db.prepare(sql), params)),
    executeUnprepared: (sql, params, transform) => run("execute", () => rows(db.prepare(sql), params, transform)),
    // Rows are read eagerly: the connection is held for the whole stream anyway,
    // and an iterator that throws midway would surface as a defect, not a SqlError.
    executeStream: (sql, params, transform) =>
      Stream.fromIterableEffect(run("stream", () => rows(db.prepare(sql), params, transform)))
  }
}
