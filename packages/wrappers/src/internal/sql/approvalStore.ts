// The approval store on any effect/sql client: one row per request, the
// input and files as JSON text. `answer` and `use` are one conditional
// UPDATE each (`WHERE status = ...`), so of two servers answering or using
// one request on a shared database exactly one wins; the loser reads the row
// again to say why it lost.
import { Effect, type Scope } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { type Approval, type ApprovalStoreShape, refusal } from "../approvalModel.ts"
import { StoreError } from "../../StoreError.ts"
import { migrate } from "./migrations.ts"

type Row = {
  readonly id: string
  readonly call_key: string
  readonly tool: string
  readonly observer_id: string
  readonly input: string
  readonly arguments: string
  readonly text: string
  readonly preview: string | null
  readonly files: string
  readonly status: Approval["status"]
  readonly created_at: number
  readonly expires_at: number
  readonly answered_at: number | null
  readonly answered_by: string | null
}

const fromRow = (row: Row): Approval => ({
  id: row.id,
  key: row.call_key,
  tool: row.tool,
  observerId: row.observer_id,
  input: JSON.parse(row.input),
  arguments: row.arguments,
  text: row.text,
  ...(row.preview === null ? {} : { preview: row.preview }),
  files: JSON.parse(row.files),
  status: row.status,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  ...(row.answered_at === null ? {} : { answeredAt: Number(row.answered_at) }),
  ...(row.answered_by === null ? {} : { answeredBy: row.answered_by })
})

const storeError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ store: "approvals", operation, detail: cause.message, cause })

export const make: Effect.Effect<ApprovalStoreShape, StoreError, SqlClient.SqlClient | Scope.Scope> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrate("approvals")
    const get = (id: string) =>
      sql<Row>`SELECT * FROM ugent_approvals WHERE id = ${id}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : fromRow(rows[0]))),
        Effect.mapError(storeError("read a request"))
      )
    return {
      durable: true,
      create: (a) =>
        sql`INSERT INTO ugent_approvals ${sql.insert({
          id: a.id,
          call_key: a.key,
          tool: a.tool,
          observer_id: a.observerId,
          input: JSON.stringify(a.input ?? null),
          arguments: a.arguments,
          text: a.text,
          preview: a.preview ?? null,
          files: JSON.stringify(a.files),
          status: a.status,
          created_at: a.createdAt,
          expires_at: a.expiresAt,
          answered_at: a.answeredAt ?? null,
          answered_by: a.answeredBy ?? null
        })}`.pipe(Effect.asVoid, Effect.mapError(storeError("store a request"))),
      get,
      find: (key) =>
        sql<Row>`SELECT * FROM ugent_approvals WHERE call_key = ${key} AND status IN ('pending', 'approved')
          ORDER BY created_at DESC, id DESC LIMIT 1`.pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : fromRow(rows[0]))),
          Effect.mapError(storeError("find a request"))
        ),
      pending: (now) =>
        sql<Row>`SELECT * FROM ugent_approvals WHERE status = 'pending' AND expires_at > ${now}
          ORDER BY created_at, id`.pipe(
          Effect.map((rows) => rows.map(fromRow)),
          Effect.mapError(storeError("list pending requests"))
        ),
      answer: (id, decision, by) =>
        Effect.gen(function* () {
          const won = yield* sql<Row>`UPDATE ugent_approvals
            SET status = ${decision}, answered_at = ${by.now}, answered_by = ${by.channel}
            WHERE id = ${id} AND status = 'pending' AND expires_at > ${by.now} RETURNING *`.pipe(
            Effect.mapError(storeError("answer a request"))
          )
          if (won[0] !== undefined) return fromRow(won[0])
          return yield* Effect.fail(
            refusal(id, yield* get(id), by.now) ??
              new StoreError({
                store: "approvals",
                operation: "answer a request",
                detail: `the request ${id} could not be updated`
              })
          )
        }),
      use: (id, now) =>
        sql<{ readonly id: string }>`UPDATE ugent_approvals SET status = 'used'
          WHERE id = ${id} AND status = 'approved' AND expires_at > ${now} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(storeError("use a request"))
        )
    }
  }
)
