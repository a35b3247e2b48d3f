// The audit store on any effect/sql client. `record` writes its entry (with
// whatever `append` queued, in one transaction) before it returns; `append`
// writes behind (./writeBehind.ts), and every read drains it first. Analytics
// are one query per dimension, the same SQL on SQLite
// and PostgreSQL, with the p50 and p95 picked by rank as the memory store
// does. Orders that compare text are made in JavaScript, so they cannot
// depend on a database's collation.
import type { ToolError } from "@ugent/core"
import { Effect, type Scope } from "effect"
import { SqlClient, type SqlError, type Statement } from "effect/sql"
import { StoreError } from "../../StoreError.ts"
import { failureOrder, observerToolOrder, refusalKinds, refusalOrder, roundMillis } from "../auditAnalytics.ts"
import type {
  AuditAnalytics,
  AuditEntry,
  AuditStats,
  AuditStoreShape,
  FailureCount,
  ObserverToolStats,
  RefusalCount,
  RefusalKind,
  TimeWindow
} from "../auditModel.ts"
import { bounded } from "../auditModel.ts"
import { migrate } from "./migrations.ts"
import * as WriteBehind from "./writeBehind.ts"

type Row = {
  readonly id: string
  readonly call_id: string
  readonly phase: AuditEntry["phase"]
  readonly at: number
  readonly observer_id: string
  readonly path: string
  readonly input_summary: string
  readonly status: AuditEntry["status"]
  readonly duration_millis: number | null
  readonly error_tag: string | null
  readonly error_message: string | null
  readonly error_kind: string | null
  readonly result_summary: string | null
  readonly estimated_tokens: number | null
  readonly client_call_id: string | null
  readonly instance: string | null
}

const toRow = (given: AuditEntry): Row => rowOf(bounded(given))

const rowOf = (e: AuditEntry): Row => ({
  id: e.id,
  call_id: e.callId,
  phase: e.phase,
  at: e.at,
  observer_id: e.observerId,
  path: e.path,
  input_summary: e.inputSummary,
  status: e.status,
  duration_millis: e.durationMillis ?? null,
  error_tag: e.error?.tag ?? null,
  error_message: e.error?.message ?? null,
  error_kind: e.error?.kind ?? null,
  result_summary: e.resultSummary ?? null,
  estimated_tokens: e.estimatedTokens ?? null,
  client_call_id: e.clientCallId ?? null,
  instance: e.instance ?? null
})

const fromRow = (row: Row): AuditEntry => {
  const entry: { -readonly [K in keyof AuditEntry]: AuditEntry[K] } = {
    id: row.id,
    callId: row.call_id,
    phase: row.phase,
    at: Number(row.at),
    observerId: row.observer_id,
    path: row.path,
    inputSummary: row.input_summary,
    status: row.status
  }
  if (row.duration_millis !== null) entry.durationMillis = Number(row.duration_millis)
  if (row.error_tag !== null) {
    entry.error =
      row.error_kind === null
        ? { tag: row.error_tag, message: row.error_message ?? "" }
        : { tag: row.error_tag, message: row.error_message ?? "", kind: row.error_kind as ToolError.Kind }
  }
  if (row.result_summary !== null) entry.resultSummary = row.result_summary
  if (row.estimated_tokens !== null) entry.estimatedTokens = Number(row.estimated_tokens)
  if (row.client_call_id !== null && row.client_call_id !== undefined) entry.clientCallId = row.client_call_id
  if (row.instance !== null && row.instance !== undefined) entry.instance = row.instance
  return entry
}

type StatsRow = {
  readonly key: string
  readonly calls: number
  readonly successes: number
  readonly failures: number
  readonly refusals: number
  readonly average: number | null
  readonly p50: number | null
  readonly p95: number | null
}

const fromStatsRow = (row: StatsRow): AuditStats => {
  const calls = Number(row.calls)
  const successes = Number(row.successes)
  const stats: AuditStats = {
    key: row.key,
    calls,
    successes,
    failures: Number(row.failures),
    refusals: Number(row.refusals),
    successRate: calls === 0 ? 0 : successes / calls
  }
  if (row.average === null || row.p50 === null || row.p95 === null) return stats
  return {
    ...stats,
    averageDurationMillis: roundMillis(Number(row.average)),
    p50DurationMillis: Number(row.p50),
    p95DurationMillis: Number(row.p95)
  }
}

type TotalsRow = {
  readonly calls: number
  readonly successes: number | null
  readonly failures: number | null
  readonly refusals: number | null
}

type RefusalRow = { readonly reason: string; readonly kind: string; readonly count: number }

type PairRow = {
  readonly observer_id: string
  readonly path: string
  readonly calls: number
  readonly successes: number
  readonly failures: number
  readonly refusals: number
}

type FailureRow = {
  readonly reason: string
  readonly kind: string | null
  readonly count: number
  readonly last_at: number
}

const storeError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ store: "audit", operation, detail: cause.message, cause })

export const make = (options?: {
  readonly sync?: boolean | undefined
}): Effect.Effect<AuditStoreShape, StoreError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const offThread = yield* WriteBehind.OffThread
    yield* migrate("audit")
    const pending = yield* WriteBehind.make<AuditEntry>({
      store: "audit",
      operation: "record an entry",
      batchSize: 1000,
      lingerMillis: 50,
      maxPending: 50_000,
      // An audit trail fails closed: once writes fail, so does every append.
      failClosed: true,
      write: (entries, closing) =>
        WriteBehind.insertAll(sql, "ugent_audit", entries, toRow, { inserter: offThread, closing })
    })

    const windowed = (window: TimeWindow, more: ReadonlyArray<Statement.Fragment> = []) =>
      sql.and([
        ...(window.since === undefined ? [] : [sql`at >= ${window.since}`]),
        ...(window.until === undefined ? [] : [sql`at < ${window.until}`]),
        ...(window.observerId === undefined ? [] : [sql`observer_id = ${window.observerId}`]),
        ...more
      ])

    const completed = (window: TimeWindow) => windowed(window, [sql`phase = 'after'`])
    // A failure of a refusal kind; the kinds are constants, written into the statement.
    const refused = sql.literal(
      `status = 'failure' AND error_kind IN (${refusalKinds.map((kind) => `'${kind}'`).join(", ")})`
    )

    // Nearest-rank percentiles: the row whose rank among its group's
    // durations is ceil(p · n), written (100p · n + 99) / 100 in integer
    // division, which both dialects share.
    const statsBy = (column: "path" | "observer_id" | "instance", window: TimeWindow) =>
      sql<StatsRow>`
        WITH calls AS (
          SELECT ${sql(column)} AS key, status, duration_millis,
            CASE WHEN ${refused} THEN 1 ELSE 0 END AS refused
          FROM ugent_audit
          WHERE ${column === "instance" ? windowed(window, [sql`phase = 'after'`, sql`instance IS NOT NULL`]) : completed(window)}
        ),
        ranked AS (
          SELECT key, duration_millis,
            ROW_NUMBER() OVER (PARTITION BY key ORDER BY duration_millis) AS rn,
            COUNT(*) OVER (PARTITION BY key) AS n
          FROM calls WHERE duration_millis IS NOT NULL
        )
        SELECT c.key AS key,
          CAST(COUNT(*) AS INTEGER) AS calls,
          CAST(SUM(CASE WHEN c.status = 'success' THEN 1 ELSE 0 END) AS INTEGER) AS successes,
          CAST(SUM(CASE WHEN c.status = 'failure' THEN 1 ELSE 0 END) AS INTEGER) AS failures,
          CAST(SUM(c.refused) AS INTEGER) AS refusals,
          AVG(c.duration_millis) AS average,
          (SELECT r.duration_millis FROM ranked r WHERE r.key = c.key AND r.rn = (50 * r.n + 99) / 100) AS p50,
          (SELECT r.duration_millis FROM ranked r WHERE r.key = c.key AND r.rn = (95 * r.n + 99) / 100) AS p95
        FROM calls c
        GROUP BY c.key
        ORDER BY c.key`.pipe(Effect.map((rows) => rows.map(fromStatsRow)))

    const totals = (window: TimeWindow) =>
      sql<TotalsRow>`
        SELECT CAST(COUNT(*) AS INTEGER) AS calls,
          CAST(SUM(CASE WHEN status = 'success' THEN 1 ELSE 0 END) AS INTEGER) AS successes,
          CAST(SUM(CASE WHEN status = 'failure' THEN 1 ELSE 0 END) AS INTEGER) AS failures,
          CAST(SUM(CASE WHEN ${refused} THEN 1 ELSE 0 END) AS INTEGER) AS refusals
        FROM ugent_audit
        WHERE ${completed(window)}`.pipe(
        // An empty window sums to NULL.
        Effect.map(([row]) => ({
          calls: Number(row?.calls ?? 0),
          successes: Number(row?.successes ?? 0),
          failures: Number(row?.failures ?? 0),
          refusals: Number(row?.refusals ?? 0)
        }))
      )

    const refusals = (window: TimeWindow) =>
      sql<RefusalRow>`
        SELECT error_tag AS reason, error_kind AS kind, CAST(COUNT(*) AS INTEGER) AS count
        FROM ugent_audit
        WHERE ${windowed(window, [sql`phase = 'after'`, refused])}
        GROUP BY error_tag, error_kind`.pipe(
        Effect.map((rows) =>
          rows
            .map(
              (row): RefusalCount => ({ reason: row.reason, kind: row.kind as RefusalKind, count: Number(row.count) })
            )
            .sort(refusalOrder)
        )
      )

    const byObserverTool = (window: TimeWindow) =>
      sql<PairRow>`
        SELECT observer_id, path,
          CAST(COUNT(*) AS INTEGER) AS calls,
          CAST(SUM(CASE WHEN status = 'success' THEN 1 ELSE 0 END) AS INTEGER) AS successes,
          CAST(SUM(CASE WHEN status = 'failure' THEN 1 ELSE 0 END) AS INTEGER) AS failures,
          CAST(SUM(CASE WHEN ${refused} THEN 1 ELSE 0 END) AS INTEGER) AS refusals
        FROM ugent_audit
        WHERE ${completed(window)}
        GROUP BY observer_id, path`.pipe(
        Effect.map((rows) =>
          rows
            .map(
              (row): ObserverToolStats => ({
                observerId: row.observer_id,
                path: row.path,
                calls: Number(row.calls),
                successes: Number(row.successes),
                failures: Number(row.failures),
                refusals: Number(row.refusals)
              })
            )
            .sort(observerToolOrder)
        )
      )

    const failures = (window: TimeWindow) =>
      sql<FailureRow>`
        SELECT error_tag AS reason, error_kind AS kind, CAST(COUNT(*) AS INTEGER) AS count, MAX(at) AS last_at
        FROM ugent_audit
        WHERE ${windowed(window, [sql`phase = 'after'`, sql`status = 'failure'`, sql`error_tag IS NOT NULL`])}
        GROUP BY error_tag, error_kind`.pipe(
        Effect.map((rows) =>
          rows
            .map(
              (row): FailureCount => ({
                reason: row.reason,
                ...(row.kind === null ? {} : { kind: row.kind as ToolError.Kind }),
                count: Number(row.count),
                lastAt: Number(row.last_at)
              })
            )
            .sort(failureOrder)
        )
      )

    const record = (entry: AuditEntry) => Effect.andThen(pending.push([entry]), pending.drain)
    return {
      record,
      // Synchronous: an entry is committed before the call it describes is answered.
      append: options?.sync === true ? record : (entry) => pending.push([entry]),
      list: (query) =>
        Effect.andThen(
          pending.drain,
          sql<Row>`SELECT * FROM ugent_audit
          WHERE ${windowed(query, [
            ...(query.path === undefined ? [] : [sql`path = ${query.path}`]),
            ...(query.observerId === undefined ? [] : [sql`observer_id = ${query.observerId}`])
          ])}
          ORDER BY at DESC, id DESC
          LIMIT ${Math.max(0, Math.floor(query.limit))}`.pipe(
            Effect.map((rows) => rows.map(fromRow)),
            Effect.mapError(storeError("list entries"))
          )
        ),
      analytics: (window) =>
        Effect.andThen(
          pending.drain,
          Effect.all({
            byTool: statsBy("path", window),
            byObserver: statsBy("observer_id", window),
            byInstance: statsBy("instance", window),
            refusals: refusals(window),
            byObserverTool: byObserverTool(window),
            failures: failures(window),
            totals: totals(window)
          }).pipe(
            // Only a room's entries name their instance: a single server's analytics have no such list.
            Effect.map(
              ({ byInstance, ...rest }): AuditAnalytics => (byInstance.length === 0 ? rest : { ...rest, byInstance })
            ),
            Effect.mapError(storeError("compute analytics"))
          )
        )
    }
  })
