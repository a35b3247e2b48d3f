// The trace store on any effect/sql client. Appends are written behind
// (./writeBehind.ts), each batch a transaction of multi-row INSERTs, so
// tracing costs the traced call a push, not a disk write. Reads and `flush`
// drain the buffer first (read-your-writes). Payloads are cut to their head
// when the batch is written (../tracePayload.ts), off the call's path; the
// retention (./retention.ts) runs when the store opens and then by the writer,
// once a minute or after a twentieth of the size bound is written.
import { Clock, Effect, Option, type Scope } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { StoreError } from "../../StoreError.ts"
import type { Pruned, TraceOptions, TraceRecord, TraceStoreShape } from "../traceModel.ts"
import type { BatchOptions } from "./writeBehind.ts"
import * as payload from "../tracePayload.ts"
import { migrate } from "./migrations.ts"
import * as retention from "./retention.ts"
import * as WriteBehind from "./writeBehind.ts"

type Row = {
  readonly id: string
  readonly parent_id: string | null
  readonly root_id: string
  readonly path: string
  /** JSON text, or the head of it when `clipped` names the field. */
  readonly input: string
  readonly output: string | null
  readonly error: string | null
  readonly status: TraceRecord["status"]
  readonly started_at: number
  readonly duration_millis: number
  readonly alternatives: string
  readonly observer_id: string | null
  readonly session_id: string | null
  readonly client_call_id: string | null
  readonly instance: string | null
  readonly clipped: string | null
  readonly bytes: number
}

const toRow = ({ record: r, texts, bytes }: payload.Stored): Row => ({
  id: r.id,
  parent_id: r.parentId ?? null,
  root_id: r.rootId,
  path: r.path,
  input: texts.input ?? "null",
  output: texts.output ?? null,
  error: texts.error ?? null,
  status: r.status,
  started_at: r.startedAt,
  duration_millis: r.durationMillis,
  alternatives: JSON.stringify(r.alternatives),
  observer_id: r.observerId ?? null,
  session_id: r.sessionId ?? null,
  client_call_id: r.clientCallId ?? null,
  instance: r.instance ?? null,
  clipped: r.clipped === undefined ? null : JSON.stringify(r.clipped),
  bytes
})

const fromRow = (row: Row): TraceRecord => {
  const clipped = row.clipped === null ? undefined : (JSON.parse(row.clipped) as NonNullable<TraceRecord["clipped"]>)
  // A clipped payload's column holds its head as it is, not JSON.
  const value = (field: payload.Field, text: string) => (clipped?.[field] === undefined ? JSON.parse(text) : text)
  const record: {
    -readonly [K in keyof TraceRecord]: TraceRecord[K]
  } = {
    id: row.id,
    rootId: row.root_id,
    path: row.path,
    input: value("input", row.input),
    status: row.status,
    startedAt: Number(row.started_at),
    durationMillis: Number(row.duration_millis),
    alternatives: JSON.parse(row.alternatives)
  }
  if (row.parent_id !== null) record.parentId = row.parent_id
  if (row.output !== null) record.output = value("output", row.output)
  if (row.error !== null) record.error = value("error", row.error)
  if (row.observer_id !== null) record.observerId = row.observer_id
  if (row.session_id !== null) record.sessionId = row.session_id
  if (row.client_call_id !== null && row.client_call_id !== undefined) record.clientCallId = row.client_call_id
  if (row.instance !== null && row.instance !== undefined) record.instance = row.instance
  if (clipped !== undefined) record.clipped = clipped
  return record
}

const storeError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ store: "trace", operation, detail: cause.message, cause })

export const make = (
  options?: BatchOptions & TraceOptions
): Effect.Effect<TraceStoreShape, StoreError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const offThread = yield* WriteBehind.OffThread
    yield* migrate("trace")
    const batchSize = Math.max(1, options?.batchSize ?? 1000)
    const linger = Math.max(0, options?.lingerMillis ?? 50)
    const maxPending = Math.max(batchSize, options?.maxPending ?? 50_000)
    const { policy, maxAgeMillis, maxBytes } = payload.resolve(options)

    const prune: Effect.Effect<Pruned, StoreError> = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      retention.prune(sql, { cutoff: now - maxAgeMillis, maxBytes }).pipe(Effect.mapError(storeError("prune traces")))
    )
    // The writer prunes after a twentieth of the size bound (at least 1 MB) or a minute of writing.
    const pruneEveryBytes = Number.isFinite(maxBytes) ? Math.max(1024 * 1024, maxBytes / 20) : Number.POSITIVE_INFINITY
    const retains = Number.isFinite(maxBytes) || Number.isFinite(maxAgeMillis)
    let writtenSincePrune = 0
    let lastPrune = yield* Clock.currentTimeMillis
    const pruneIfDue = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (!retains || (writtenSincePrune < pruneEveryBytes && now - lastPrune < 60_000)) return Effect.void
      writtenSincePrune = 0
      lastPrune = now
      // Losing a pruning is not losing a trace: the next one catches up.
      return Effect.catch(prune, (e) => Effect.logWarning("trace store: pruning old traces failed", e.message))
    })
    if (retains)
      yield* Effect.catch(prune, (e) => Effect.logWarning("trace store: pruning old traces failed", e.message))

    const pending = yield* WriteBehind.make<TraceRecord>({
      store: "trace",
      operation: "write traces",
      batchSize,
      lingerMillis: linger,
      maxPending,
      // Losing a trace must not fail a call: appends fail only past maxPending.
      failClosed: false,
      write: (records, closing) =>
        Effect.suspend(() => {
          const rows = records.map((record) => toRow(payload.store(record, policy)))
          return WriteBehind.insertAll(sql, "ugent_traces", rows, (row) => row, { inserter: offThread, closing }).pipe(
            Effect.tap(() =>
              Effect.suspend(() => {
                for (const row of rows) writtenSincePrune += row.bytes
                return closing ? Effect.void : pruneIfDue
              })
            )
          )
        })
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
        ),
      prune: Effect.andThen(drain, prune)
    }
  })
