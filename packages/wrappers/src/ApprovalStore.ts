/**
 * The `ApprovalStore` keeps the approvals a person is asked for, so a
 * question outlives the call and the process that asked it: a request is
 * stored (pending) with the call's arguments, the diff it would make and the
 * hashes of the files it would touch; it is answered from any channel
 * (approved or denied), at most once, before it expires; and an approved
 * request is used once, by the call that matches it.
 *
 * Its API is small on purpose, so several servers can share one store
 * (PostgreSQL) and every change of state is one conditional write, which
 * exactly one of two racing writers wins:
 *
 * - `create` stores a pending request;
 * - `get` reads one by id, `find` the newest of a call (by its key);
 * - `pending` lists the requests still waiting, oldest first;
 * - `answer` approves or denies a pending request (typed refusals for an
 *   unknown, expired or already answered id);
 * - `use` marks an approved request used (`false` when another call used it
 *   first, or it expired).
 *
 * @since 0.2.0
 */
import { Context, Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { type Approval, type ApprovalStoreShape, refusal } from "./internal/approvalModel.ts"
import * as sqlStore from "./internal/sql/approvalStore.ts"
import * as databases from "./internal/sql/databases.ts"
import type { PgOptions, SqliteOptions } from "./internal/sql/databases.ts"
import type { StoreError } from "./StoreError.ts"

export {
  AlreadyAnswered,
  Approval,
  ApprovalExpired,
  ApprovalStatus,
  BoundFile,
  refusal,
  UnknownApproval
} from "./internal/approvalModel.ts"
export type { AnswerError, ApprovalStoreShape } from "./internal/approvalModel.ts"

/**
 * The approval store service.
 *
 * **Example** (A request answered once)
 * ```ts
 * import { ApprovalStore } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   const store = yield* ApprovalStore.ApprovalStore
 *   yield* store.create({ id: "ap-1", key: "k", tool: "file.write", observerId: "agent", input: { path: "a.txt" },
 *     arguments: 'path: "a.txt"', text: "agent asks…", files: [{ path: "a.txt", hash: null }], status: "pending",
 *     createdAt: 0, expiresAt: 60_000 })
 *   const approved = yield* store.answer("ap-1", "approved", { channel: "cli", now: 10 })
 *   const again = yield* Effect.flip(store.answer("ap-1", "denied", { channel: "cli", now: 20 }))
 *   return [approved.status, again._tag, yield* store.use("ap-1", 30), yield* store.use("ap-1", 40)]
 * })
 * console.log(Effect.runSync(Effect.provide(program, ApprovalStore.layerMemory())))
 * // => [ 'approved', 'AlreadyAnswered', true, false ]
 * ```
 *
 * @category services
 * @since 0.2.0
 */
export class ApprovalStore extends Context.Service<ApprovalStore, ApprovalStoreShape>()("ugent/ApprovalStore") {}

/**
 * An approval store in memory (one process; gone with it).
 *
 * @category constructors
 * @since 0.2.0
 */
export const makeMemory = (): ApprovalStoreShape => {
  const all = new Map<string, Approval>()
  return {
    create: (approval) => Effect.sync(() => void all.set(approval.id, approval)),
    get: (id) => Effect.sync(() => all.get(id)),
    find: (key) =>
      Effect.sync(() => {
        let newest: Approval | undefined
        for (const a of all.values()) {
          if (a.key !== key || (a.status !== "pending" && a.status !== "approved")) continue
          if (newest === undefined || a.createdAt >= newest.createdAt) newest = a
        }
        return newest
      }),
    pending: (now) =>
      Effect.sync(() =>
        [...all.values()]
          .filter((a) => a.status === "pending" && a.expiresAt > now)
          .sort((a, b) => a.createdAt - b.createdAt)
      ),
    answer: (id, decision, by) =>
      Effect.suspend(() => {
        const found = all.get(id)
        const refused = refusal(id, found, by.now)
        if (refused !== undefined) return Effect.fail(refused)
        const answered: Approval = { ...found!, status: decision, answeredAt: by.now, answeredBy: by.channel }
        all.set(id, answered)
        return Effect.succeed(answered)
      }),
    use: (id, now) =>
      Effect.sync(() => {
        const found = all.get(id)
        if (found === undefined || found.status !== "approved" || found.expiresAt <= now) return false
        all.set(id, { ...found, status: "used" })
        return true
      })
  }
}

/**
 * A fresh in-memory approval store.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerMemory = (): Layer.Layer<ApprovalStore> =>
  Layer.sync(ApprovalStore, () => ApprovalStore.of(makeMemory()))

/**
 * An approval store on the `SqlClient` in context (SQLite or PostgreSQL); it
 * brings its table up to date when built. Every write commits before it
 * returns, and `answer` and `use` are single conditional updates, so two
 * servers on one database never both answer or both use one request.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerSql: Layer.Layer<ApprovalStore, StoreError, SqlClient.SqlClient> = Layer.effect(
  ApprovalStore,
  Effect.map(sqlStore.make, ApprovalStore.of)
)

/**
 * An approval store in a SQLite file (default `<cwd>/.ugent/ugent.db`).
 *
 * @category layers
 * @since 0.2.0
 */
export const layerSqlite = (options: SqliteOptions = {}): Layer.Layer<ApprovalStore, StoreError> =>
  layerSql.pipe(Layer.provide(databases.sqlite("approvals", options)))

/**
 * An approval store in PostgreSQL, on its own pool; several servers on one
 * database share their pending approvals.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerPg = (options: PgOptions): Layer.Layer<ApprovalStore, StoreError> =>
  layerSql.pipe(Layer.provide(databases.pg("approvals", options)))
