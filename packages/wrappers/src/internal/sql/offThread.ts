// The write-behind's inserts into a SQLite file, made by a worker thread on a
// connection of its own. `node:sqlite` is synchronous: on the main thread a
// batch's commit, and any wait of the disk under it (tens of milliseconds on
// a busy machine), holds the event loop, and with it every tool call in
// flight. Here the main thread only hands rows over; the write-behind waits
// for the worker's commit, so its `drain` still means "written", and a read
// on the main connection after it sees the rows (a WAL reader sees every
// committed write). The worker starts with the first batch, and is held open
// only while a batch is in flight. If it cannot start or dies, batches go
// back to the main connection. Written here: node:sqlite has no asynchronous
// API, and effect/sql no off-thread writer.
import type { Worker } from "node:worker_threads"
import { Effect, type Scope } from "effect"
import type { SqlError } from "effect/sql"
import { sqlError, toInput } from "./sqliteConnection.ts"

/** Inserts rows into a table (a row whose id is stored is ignored), in one transaction. */
export interface Inserter {
  /**
   * `undefined` when the thread is gone, or not started and `start` is false
   * (a store closing: starting a thread for its last batch would only delay
   * the exit): the caller writes on its own connection.
   */
  readonly insert: (
    table: string,
    rows: ReadonlyArray<Record<string, unknown>>,
    start: boolean
  ) => Effect.Effect<void, SqlError.SqlError> | undefined
}

// CommonJS, run from this text (`eval`), so the same code serves the sources and every build.
const source = `
const { parentPort, workerData } = require("node:worker_threads")
const { DatabaseSync } = require("node:sqlite")
const db = new DatabaseSync(workerData.filename, { timeout: workerData.busyTimeoutMillis })
db.exec("PRAGMA synchronous = NORMAL")
const statements = new Map()
const quote = (name) => '"' + name.replace(/"/g, '""') + '"'
const statement = (table, columns) => {
  const key = table + "\\u0000" + columns.join("\\u0000")
  let found = statements.get(key)
  if (found === undefined) {
    found = db.prepare(
      "INSERT INTO " + quote(table) + " (" + columns.map(quote).join(", ") + ") VALUES (" +
        columns.map(() => "?").join(", ") + ") ON CONFLICT (id) DO NOTHING"
    )
    statements.set(key, found)
  }
  return found
}
parentPort.on("message", (message) => {
  if (message.close === true) {
    db.close()
    parentPort.close()
    return
  }
  try {
    const insert = statement(message.table, message.columns)
    db.exec("BEGIN IMMEDIATE")
    try {
      for (const row of message.rows) insert.run(...row)
      db.exec("COMMIT")
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK")
      throw error
    }
    parentPort.postMessage({ id: message.id })
  } catch (error) {
    parentPort.postMessage({
      id: message.id,
      error: { message: String(error && error.message || error), code: error && error.code, errcode: error && error.errcode }
    })
  }
})
`

interface Reply {
  readonly id: number
  readonly error?: { readonly message: string; readonly code?: string; readonly errcode?: number }
}

type Resume = (effect: Effect.Effect<void, SqlError.SqlError>) => void

const failure = (detail: string) => sqlError(new Error(detail), "execute", "The SQLite writer thread failed")

/** An inserter for `filename`, closed with the scope (after what it was given is written). */
export const make = (filename: string, busyTimeoutMillis: number): Effect.Effect<Inserter, never, Scope.Scope> =>
  Effect.gen(function* () {
    let worker: Worker | undefined
    let gone = false
    let next = 0
    const pending = new Map<number, Resume>()

    const settle = (id: number, effect: Effect.Effect<void, SqlError.SqlError>) => {
      const resume = pending.get(id)
      if (resume === undefined) return
      pending.delete(id)
      if (pending.size === 0) worker?.unref()
      resume(effect)
    }
    const abandon = (detail: string) => {
      gone = true
      worker = undefined
      for (const id of [...pending.keys()]) settle(id, Effect.fail(failure(detail)))
    }
    const start = (): Worker | undefined => {
      if (gone) return undefined
      if (worker !== undefined) return worker
      try {
        // Loaded with the first batch: a command that writes nothing (`ugent list`) never loads threads.
        const threads = process.getBuiltinModule("node:worker_threads")
        const made = new threads.Worker(source, { eval: true, workerData: { filename, busyTimeoutMillis } })
        made.on("message", (reply: Reply) =>
          settle(
            reply.id,
            reply.error === undefined
              ? Effect.void
              : Effect.fail(
                  sqlError(
                    Object.assign(new Error(reply.error.message), reply.error),
                    "execute",
                    "Failed to insert rows"
                  )
                )
          )
        )
        made.on("error", (error) => abandon(error.message))
        made.on("exit", (code) => abandon(`the writer thread exited (code ${code})`))
        made.unref()
        worker = made
        return made
      } catch {
        gone = true
        return undefined
      }
    }

    // Messages are handled in order: the close comes after every batch already handed over. The scope ends
    // when the thread has closed its connection (a second at most), so the file is at rest afterwards.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        const open = worker
        gone = true
        worker = undefined
        if (open === undefined) return Effect.void
        return Effect.callback<void>((resume) => {
          open.once("exit", () => resume(Effect.void))
          open.ref()
          open.postMessage({ close: true })
        }).pipe(
          Effect.timeoutOrElse({
            duration: "1 second",
            orElse: () => Effect.promise(() => open.terminate())
          }),
          Effect.asVoid
        )
      })
    )

    return {
      insert: (table, rows, mayStart) => {
        // An empty batch has nothing to write: it starts no thread.
        if (rows.length === 0) return Effect.void
        const thread = worker ?? (mayStart ? start() : undefined)
        if (thread === undefined) return undefined
        const columns = Object.keys(rows[0]!)
        const values = rows.map((row) => columns.map((column) => toInput(row[column])))
        return Effect.callback<void, SqlError.SqlError>((resume) => {
          const id = next++
          if (pending.size === 0) thread.ref()
          pending.set(id, resume)
          thread.postMessage({ id, table, columns, rows: values })
        })
      }
    }
  })
