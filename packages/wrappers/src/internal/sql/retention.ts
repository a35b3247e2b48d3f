// Retention of the SQL trace table: rows that started before a cutoff go,
// then the oldest rows past a total size (the `bytes` column), oldest first.
// Deletes run in chunks of 1,000 rows, so no statement holds the database (and
// on SQLite the event loop) for long. The size is checked cheaply first, by
// what the database occupies (SQLite's used pages, PostgreSQL's relation
// size): only when that is over the bound are the rows' sizes added up, from
// an index that holds them. Written here, as effect/sql has no retention.
import { Effect } from "effect"
import type { SqlClient, SqlError, Statement } from "effect/sql"

const chunk = 1000

export interface Bounds {
  /** Rows that started before this (epoch milliseconds) go. */
  readonly cutoff: number
  readonly maxBytes: number
}

/** Deletes, a chunk at a time, the rows whose `where` holds; the number deleted. */
const deleteWhere = (sql: SqlClient.SqlClient, where: Statement.Fragment): Effect.Effect<number, SqlError.SqlError> =>
  Effect.gen(function* () {
    let total = 0
    while (true) {
      const gone = yield* sql<{ readonly id: string }>`DELETE FROM ugent_traces WHERE id IN (
        SELECT id FROM ugent_traces WHERE ${where} ORDER BY started_at, id LIMIT ${chunk}
      ) RETURNING id`
      total += gone.length
      if (gone.length < chunk) return total
    }
  })

/** What the table may occupy at most, from the database's own accounting (a cheap upper bound of `bytes`). */
const occupied = (sql: SqlClient.SqlClient): Effect.Effect<number, SqlError.SqlError> =>
  sql.onDialectOrElse({
    pg: () =>
      Effect.map(
        sql<{ readonly size: string | number }>`SELECT pg_total_relation_size('ugent_traces') AS size`,
        (rows) => Number(rows[0]?.size ?? 0)
      ),
    orElse: () =>
      Effect.map(
        sql<{
          readonly used: number
        }>`SELECT (page_count - freelist_count) * page_size AS used FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`,
        (rows) => Number(rows[0]?.used ?? 0)
      )
  })

export const prune = (
  sql: SqlClient.SqlClient,
  bounds: Bounds
): Effect.Effect<{ readonly byAge: number; readonly bySize: number }, SqlError.SqlError> =>
  Effect.gen(function* () {
    const byAge = Number.isFinite(bounds.cutoff) ? yield* deleteWhere(sql, sql`started_at < ${bounds.cutoff}`) : 0
    if (!Number.isFinite(bounds.maxBytes) || (yield* occupied(sql)) <= bounds.maxBytes) return { byAge, bySize: 0 }
    // The newest row that no longer fits: it and every older row go.
    const [last] = yield* sql<{ readonly started_at: number; readonly id: string }>`
      SELECT started_at, id FROM (
        SELECT started_at, id, SUM(COALESCE(bytes, 0)) OVER (ORDER BY started_at DESC, id DESC) AS kept
        FROM ugent_traces
      ) newest WHERE kept > ${bounds.maxBytes} ORDER BY started_at DESC, id DESC LIMIT 1`
    if (last === undefined) return { byAge, bySize: 0 }
    const bySize = yield* deleteWhere(
      sql,
      sql`(started_at < ${last.started_at} OR (started_at = ${last.started_at} AND id <= ${last.id}))`
    )
    return { byAge, bySize }
  })
