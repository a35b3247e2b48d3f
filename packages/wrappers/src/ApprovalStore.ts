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
import type { ToolError } from "@ugent/core"
import { Context, Effect, Layer, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as databases from "./internal/sql/databases.ts"
import * as sqlStore from "./internal/sql/approvalStore.ts"
import type { StoreError } from "./StoreError.ts"
import type { PgOptions, SqliteOptions } from "./Stores.ts"

/**
 * A file the approved call would touch, with the SHA-256 (hex) of its bytes
 * when the request was made (`null`: the file did not exist).
 *
 * @category schemas
 * @since 0.2.0
 */
export const BoundFile = Schema.Struct({ path: Schema.String, hash: Schema.NullOr(Schema.String) })

/**
 * @category models
 * @since 0.2.0
 */
export type BoundFile = typeof BoundFile.Type

/**
 * Where a request stands: waiting, answered (approved or denied), or
 * approved and then used by the call it approved.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ApprovalStatus = Schema.Literals(["pending", "approved", "denied", "used"])

/**
 * @category models
 * @since 0.2.0
 */
export type ApprovalStatus = typeof ApprovalStatus.Type

/**
 * One approval request. `key` names the call it approves (its path, its
 * caller and its arguments, see the road), `files` the bytes it was shown
 * against. Times are epoch milliseconds.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Approval = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  tool: Schema.String,
  observerId: Schema.String,
  /** The call's input as JSON (a read proof left out). */
  input: Schema.Unknown,
  /** The arguments in one line, for a person. */
  arguments: Schema.String,
  /** What the person is asked, in full (arguments and diff). */
  text: Schema.String,
  /** The diff the call would make (its dry run), when the tool has one. */
  preview: Schema.optionalKey(Schema.String),
  files: Schema.Array(BoundFile),
  status: ApprovalStatus,
  createdAt: Schema.Number,
  expiresAt: Schema.Number,
  answeredAt: Schema.optionalKey(Schema.Number),
  /** The channel that answered: `mcp-elicitation`, `http-pending`, `cli`, `terminal`… */
  answeredBy: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "Approval" })

/**
 * @category models
 * @since 0.2.0
 */
export type Approval = typeof Approval.Type

/**
 * No approval request has this id.
 *
 * @category errors
 * @since 0.2.0
 */
export class UnknownApproval extends Schema.TaggedError<UnknownApproval>()("UnknownApproval", {
  id: Schema.String
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    return `No approval request has the id ${this.id}. List the pending ones (GET /v1/pending, or ugent approve without an id) and answer one of those.`
  }
}

/**
 * The request expired before it was answered (or, approved, before it was used).
 *
 * @category errors
 * @since 0.2.0
 */
export class ApprovalExpired extends Schema.TaggedError<ApprovalExpired>()("ApprovalExpired", {
  id: Schema.String,
  tool: Schema.String,
  expiredAt: Schema.Number
}) {
  static readonly kind: ToolError.Kind = "conflict"
  override get message(): string {
    return `The approval request ${this.id} (${this.tool}) expired at ${new Date(this.expiredAt).toISOString()}; nothing was approved. Make the call again to ask anew.`
  }
}

/**
 * The request was answered already: an answer is given once.
 *
 * @category errors
 * @since 0.2.0
 */
export class AlreadyAnswered extends Schema.TaggedError<AlreadyAnswered>()("AlreadyAnswered", {
  id: Schema.String,
  tool: Schema.String,
  status: ApprovalStatus,
  answeredBy: Schema.optionalKey(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "conflict"
  override get message(): string {
    const by = this.answeredBy === undefined ? "" : ` through ${this.answeredBy}`
    return `The approval request ${this.id} (${this.tool}) was already answered${by}: it is ${this.status}. An answer is given once; to change it, make the call again and answer the new request.`
  }
}

/**
 * The errors of answering.
 *
 * @category models
 * @since 0.2.0
 */
export type AnswerError = UnknownApproval | ApprovalExpired | AlreadyAnswered | StoreError

/**
 * The operations of an approval store (see the module's description).
 *
 * @category models
 * @since 0.2.0
 */
export interface ApprovalStoreShape {
  readonly create: (approval: Approval) => Effect.Effect<void, StoreError>
  readonly get: (id: string) => Effect.Effect<Approval | undefined, StoreError>
  /** The newest request of a call that is pending or approved (unused), expired or not. */
  readonly find: (key: string) => Effect.Effect<Approval | undefined, StoreError>
  /** The requests waiting for an answer at `now`, oldest first. */
  readonly pending: (now: number) => Effect.Effect<ReadonlyArray<Approval>, StoreError>
  readonly answer: (
    id: string,
    decision: "approved" | "denied",
    by: { readonly channel: string; readonly now: number }
  ) => Effect.Effect<Approval, AnswerError>
  /** Marks an approved request used; `false` when it is not approved and unexpired at `now`. */
  readonly use: (id: string, now: number) => Effect.Effect<boolean, StoreError>
}

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
 * The refusal of an answer to `found` at `now`, if any: the same rule on every backend.
 *
 * @category answering
 * @since 0.2.0
 */
export const refusal = (id: string, found: Approval | undefined, now: number): AnswerError | undefined => {
  if (found === undefined) return new UnknownApproval({ id })
  if (found.status !== "pending") {
    return new AlreadyAnswered({
      id,
      tool: found.tool,
      status: found.status,
      ...(found.answeredBy === undefined ? {} : { answeredBy: found.answeredBy })
    })
  }
  if (found.expiresAt <= now) return new ApprovalExpired({ id, tool: found.tool, expiredAt: found.expiresAt })
  return undefined
}

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
