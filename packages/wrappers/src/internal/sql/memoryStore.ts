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
  readonly used_at: number | null
  readonly expires_at: number | null
  readonly source_path: string | null
  readonly source_hash: string | null
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
  return {
    ...info,
    ...(row.owner === null ? {} : { owner: row.owner }),
    ...(row.used_at === null ? {} : { usedAt: Number(row.used_at) }),
    ...(row.expires_at === null ? {} : { expiresAt: Number(row.expires_at) }),
    ...(row.source_path === null || row.source_hash === null
      ? {}
      : { source: { path: row.source_path, hash: row.source_hash } })
  }
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
          owner: entry.owner ?? null,
          used_at: entry.usedAt ?? null,
          expires_at: entry.expiresAt ?? null,
          source_path: entry.source?.path ?? null,
          source_hash: entry.source?.hash ?? null
        }
        return sql`INSERT INTO ugent_memory ${sql.insert(row)}
          ON CONFLICT (id) DO UPDATE SET tool = excluded.tool, kind = excluded.kind, summary = excluded.summary,
            content = excluded.content, size = excluded.size, lines = excluded.lines, created_at = excluded.created_at,
            owner = excluded.owner, used_at = excluded.used_at, expires_at = excluded.expires_at,
            source_path = excluded.source_path, source_hash = excluded.source_hash`.pipe(
          Effect.asVoid,
          Effect.mapError(storeError("store an entry"))
        )
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
      list: ({ tool, owner, limit, now }) =>
        sql<Row>`SELECT id, tool, kind, summary, size, lines, created_at, owner, used_at, expires_at, source_path,
            source_hash FROM ugent_memory
          WHERE ${sql.and([
            ...(tool === undefined ? [] : [sql`tool = ${tool}`]),
            ...(owner === undefined ? [] : owner === null ? [sql`owner IS NULL`] : [sql`owner = ${owner}`]),
            ...(now === undefined ? [] : [sql`(expires_at IS NULL OR expires_at > ${now})`])
          ])}
          ORDER BY created_at DESC, id DESC
          LIMIT ${Math.max(0, Math.floor(limit))}`.pipe(
          Effect.map((rows) => rows.map(infoOf)),
          Effect.mapError(storeError("list entries"))
        ),
      touch: (id, at) =>
        sql`UPDATE ugent_memory SET used_at = ${at} WHERE id = ${id}`.pipe(
          Effect.asVoid,
          Effect.mapError(storeError("record a read"))
        ),
      sweep: (now) =>
        sql`DELETE FROM ugent_memory WHERE expires_at IS NOT NULL AND expires_at <= ${now}`.pipe(
          Effect.asVoid,
          Effect.mapError(storeError("forget expired entries"))
        )
    }
  }
)
