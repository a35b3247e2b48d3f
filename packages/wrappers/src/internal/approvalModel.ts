/**
 * The model of the approval store: what a request holds, the refusals of an
 * answer, and the store's operations, shared by its backends.
 *
 * @internal
 */
import type { ToolError } from "@ugent/core"
import { type Effect, Schema } from "effect"
import type { StoreError } from "../StoreError.ts"

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
  /** Whether requests outlive this process (SQLite, PostgreSQL), so another process may answer them (`ugent approve`). */
  readonly durable?: boolean | undefined
}

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
