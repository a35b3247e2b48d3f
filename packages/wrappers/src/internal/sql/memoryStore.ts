// The working memory on any effect/sql client: one row per entry, content
// as text, sizes computed once when the entry is stored. Cutting ranges and
// lines happens in MemoryStore (JavaScript), the same on every backend.
import { Effect, type Scope } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { StoreError } from "../../StoreError.ts"
import type { MemoryEntry, MemoryInfo, MemoryPrimitives } from "../memoryModel.ts"
import { migrate } from "./migrations.ts"

type Row = {
  readonly id: string
  readonly tool: string
  readonly kind: MemoryEntry["kind"]
  readonly summary: string
  readonly size: number
  readonly lines: number
  readonly created_at: number
  readonly owner: string | null
}

const infoOf = (row: Row): MemoryInfo => {
  const info: MemoryInfo = {
    id: row.id,
    tool: row.tool,
    kind: row.kind,
    summary: row.summary,
    size: Number(row.size),
    lines: Number(row.lines),
    createdAt: Number(row.created_at)
  }
  return row.owner === null ? info : { ...info, owner: row.owner }
}

const storeError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ store: "memory", operation, detail: cause.message, cause })

export const make: Effect.Effect<MemoryPrimitives, StoreError, SqlClient.SqlClient | Scope.Scope> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrate("memory")
    return {
      write: (entry) => {
        const row: Record<string, unknown> = {
          id: entry.id,
          tool: entry.tool,
          kind: entry.kind,
          summary: entry.summary,
          content: entry.content,
          size: entry.size,
          lines: entry.lines,
          created_at: entry.createdAt,
          owner: entry.owner ?? null
        }
        return sql`INSERT INTO ugent_memory ${sql.insert(row)}
          ON CONFLICT (id) DO UPDATE SET tool = excluded.tool, kind = excluded.kind, summary = excluded.summary,
            content = excluded.content, size = excluded.size, lines = excluded.lines, created_at = excluded.created_at,
            owner = excluded.owner`.pipe(Effect.asVoid, Effect.mapError(storeError("store an entry")))
      },
      read: (id) =>
        sql<Row & { readonly content: string }>`SELECT * FROM ugent_memory WHERE id = ${id}`.pipe(
          Effect.map((rows) => {
            const row = rows[0]
            return row === undefined ? undefined : { ...infoOf(row), content: row.content }
          }),
          Effect.mapError(storeError("read an entry"))
        ),
      delete: (id) =>
        sql<{ readonly id: string }>`DELETE FROM ugent_memory WHERE id = ${id} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(storeError("delete an entry"))
        ),
      list: ({ tool, owner, limit }) =>
        sql<Row>`SELECT id, tool, kind, summary, size, lines, created_at, owner FROM ugent_memory
          WHERE ${sql.and([
            ...(tool === undefined ? [] : [sql`tool = ${tool}`]),
            ...(owner === undefined ? [] : owner === null ? [sql`owner IS NULL`] : [sql`owner = ${owner}`])
          ])}
          ORDER BY created_at DESC, id DESC
          LIMIT ${Math.max(0, Math.floor(limit))}`.pipe(
          Effect.map((rows) => rows.map(infoOf)),
          Effect.mapError(storeError("list entries"))
        )
    }
  }
)
