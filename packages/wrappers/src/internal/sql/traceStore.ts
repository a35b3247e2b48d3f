// The trace store on any effect/sql client. Appends are written behind
// (./writeBehind.ts), each batch a transaction of multi-row INSERTs, so
// tracing costs the traced call a push, not a disk write. Reads and `flush`
// drain the buffer first (read-your-writes).
import { Boundary } from "@ugent/core"
import { Effect, Option, type Scope } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { StoreError } from "../../StoreError.ts"
import type { BatchOptions } from "../../Stores.ts"
import type { TraceRecord, TraceStoreShape } from "../../TraceStore.ts"
import { migrate } from "./migrations.ts"
import * as WriteBehind from "./writeBehind.ts"

type Row = {
  readonly id: string
  readonly parent_id: string | null
  readonly root_id: string
  readonly path: string
  readonly input: string
  readonly output: string | null
  readonly error: string | null
  readonly status: TraceRecord["status"]
  readonly started_at: number
  readonly duration_millis: number
  readonly alternatives: string
  readonly observer_id: string | null
  readonly session_id: string | null
}

const toRow = (r: TraceRecord): Row => ({
  id: r.id,
  parent_id: r.parentId ?? null,
  root_id: r.rootId,
  path: r.path,
  input: JSON.stringify(r.input),
  // The road has usually printed this output already (the same object): its text is reused.
  output: r.output === undefined ? null : Boundary.jsonText(r.output),
  error: r.error === undefined ? null : JSON.stringify(r.error),
  status: r.status,
  started_at: r.startedAt,
  duration_millis: r.durationMillis,
  alternatives: JSON.stringify(r.alternatives),
  observer_id: r.observerId ?? null,
  session_id: r.sessionId ?? null
})

const fromRow = (row: Row): TraceRecord => {
  const record: {
    -readonly [K in keyof TraceRecord]: TraceRecord[K]
  } = {
    id: row.id,
    rootId: row.root_id,
    path: row.path,
    input: JSON.parse(row.input),
    status: row.status,
    startedAt: Number(row.started_at),
    durationMillis: Number(row.duration_millis),
    alternatives: JSON.parse(row.alternatives)
  }
  if (row.parent_id !== null) record.parentId = row.parent_id
  if (row.output !== null) record.output = JSON.parse(row.output)
  if (row.error !== null) record.error = JSON.parse(row.error)
  if (row.observer_id !== null) record.observerId = row.observer_id
  if (row.session_id !== null) record.sessionId = row.session_id
  return record
}

const storeError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ store: "trace", operation, detail: cause.message, cause })

export const make = (
  options?: BatchOptions
): Effect.Effect<TraceStoreShape, StoreError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const offThread = yield* WriteBehind.OffThread
    yield* migrate("trace")
    const batchSize = Math.max(1, options?.batchSize ?? 1000)
    const linger = Math.max(0, options?.lingerMillis ?? 50)
    const maxPending = Math.max(batchSize, options?.maxPending ?? 50_000)

    const pending = yield* WriteBehind.make<TraceRecord>({
      store: "trace",
      operation: "write traces",
      batchSize,
      lingerMillis: linger,
      maxPending,
      // Losing a trace must not fail a call: appends fail only past maxPending.
      failClosed: false,
      write: (records, closing) =>
        WriteBehind.insertAll(sql, "ugent_traces", records, toRow, { inserter: offThread, closing })
    })
    const drain = pending.drain

    const read = <A>(operation: string, query: Effect.Effect<A, SqlError.SqlError>) =>
      Effect.andThen(drain, Effect.mapError(query, storeError(operation)))

    return {
      append: pending.push,
      flush: drain,
      get: (id) =>
        read(
          "read a trace",
          Effect.map(sql<Row>`SELECT * FROM ugent_traces WHERE id = ${id}`, (rows) =>
            Option.map(Option.fromNullishOr(rows[0]), fromRow)
          )
        ),
      children: (id) =>
        read(
          "read child traces",
          Effect.map(sql<Row>`SELECT * FROM ugent_traces WHERE parent_id = ${id} ORDER BY started_at, id`, (rows) =>
            rows.map(fromRow)
          )
        ),
      byRoot: (rootId) =>
        read(
          "read a trace tree",
          Effect.map(sql<Row>`SELECT * FROM ugent_traces WHERE root_id = ${rootId} ORDER BY started_at, id`, (rows) =>
            rows.map(fromRow)
          )
        ),
      recent: ({ limit, path }) =>
        read(
          "read recent traces",
          Effect.map(
            path === undefined
              ? sql<Row>`SELECT * FROM ugent_traces ORDER BY started_at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`
              : sql<Row>`SELECT * FROM ugent_traces WHERE path = ${path} ORDER BY started_at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
            (rows) => rows.map(fromRow)
          )
        )
    }
  })
