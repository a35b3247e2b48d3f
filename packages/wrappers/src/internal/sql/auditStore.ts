// The audit store on any effect/sql client. Each entry is written when
// `record` returns (an audit trail must not lag behind the calls it
// describes); analytics are one query per dimension, the same SQL on SQLite
// and PostgreSQL, with the p95 picked by rank as the memory store does.
import { Effect, type Scope } from "effect"
import { SqlClient, type SqlError, type Statement } from "effect/sql"
import type { AuditAnalytics, AuditEntry, AuditStats, AuditStoreShape, TimeWindow } from "../../AuditStore.ts"
import { StoreError } from "../../StoreError.ts"
import { roundMillis } from "../auditAnalytics.ts"
import { migrate } from "./migrations.ts"

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
  readonly result_summary: string | null
  readonly estimated_tokens: number | null
}

const toRow = (e: AuditEntry): Row => ({
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
  result_summary: e.resultSummary ?? null,
  estimated_tokens: e.estimatedTokens ?? null
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
  if (row.error_tag !== null) entry.error = { tag: row.error_tag, message: row.error_message ?? "" }
  if (row.result_summary !== null) entry.resultSummary = row.result_summary
  if (row.estimated_tokens !== null) entry.estimatedTokens = Number(row.estimated_tokens)
  return entry
}

type StatsRow = {
  readonly key: string
  readonly calls: number
  readonly successes: number
  readonly failures: number
  readonly average: number | null
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
    successRate: calls === 0 ? 0 : successes / calls
  }
  if (row.average === null || row.p95 === null) return stats
  return { ...stats, averageDurationMillis: roundMillis(Number(row.average)), p95DurationMillis: Number(row.p95) }
}

const storeError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ store: "audit", operation, detail: cause.message, cause })

export const make: Effect.Effect<AuditStoreShape, StoreError, SqlClient.SqlClient | Scope.Scope> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrate("audit")

    const windowed = (window: TimeWindow, more: ReadonlyArray<Statement.Fragment> = []) =>
      sql.and([
        ...(window.since === undefined ? [] : [sql`at >= ${window.since}`]),
        ...(window.until === undefined ? [] : [sql`at < ${window.until}`]),
        ...more
      ])

    // Nearest-rank p95: the row whose rank among its group's durations is
    // ceil(0.95 · n), written (95n + 99) / 100 in integer division, which both
    // dialects share.
    const statsBy = (column: "path" | "observer_id", window: TimeWindow) =>
      sql<StatsRow>`
        WITH calls AS (
          SELECT ${sql(column)} AS key, status, duration_millis FROM ugent_audit
          WHERE ${windowed(window, [sql`phase = 'after'`])}
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
          AVG(c.duration_millis) AS average,
          (SELECT r.duration_millis FROM ranked r WHERE r.key = c.key AND r.rn = (95 * r.n + 99) / 100) AS p95
        FROM calls c
        GROUP BY c.key
        ORDER BY c.key`.pipe(Effect.map((rows) => rows.map(fromStatsRow)))

    return {
      record: (entry) =>
        sql`INSERT INTO ugent_audit ${sql.insert(toRow(entry))} ON CONFLICT (id) DO NOTHING`.pipe(
          Effect.asVoid,
          Effect.mapError(storeError("record an entry"))
        ),
      list: (query) =>
        sql<Row>`SELECT * FROM ugent_audit
          WHERE ${windowed(query, [
            ...(query.path === undefined ? [] : [sql`path = ${query.path}`]),
            ...(query.observerId === undefined ? [] : [sql`observer_id = ${query.observerId}`])
          ])}
          ORDER BY at DESC, id DESC
          LIMIT ${Math.max(0, Math.floor(query.limit))}`.pipe(
          Effect.map((rows) => rows.map(fromRow)),
          Effect.mapError(storeError("list entries"))
        ),
      analytics: (window) =>
        Effect.all({ byTool: statsBy("path", window), byObserver: statsBy("observer_id", window) }).pipe(
          Effect.map((analytics): AuditAnalytics => analytics),
          Effect.mapError(storeError("compute analytics"))
        )
    }
  }
)
