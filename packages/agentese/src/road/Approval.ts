/**
 * Approvals bound to bytes, answered any time. A call that needs a person's
 * approval is stored as a request (`ApprovalStore`) with its arguments, the
 * diff its dry run shows and the SHA-256 of each file it would write; the
 * person is asked through the call's channel (MCP elicitation, the HTTP
 * pending questions, the terminal), and the request can be answered from
 * any other channel meanwhile or later (`ugent approve <id>`, `POST
 * /v1/pending/<id>`), from this process or another on the same store.
 *
 * - Approved within the wait: the call runs, once, with the files' approved
 *   hashes in its context (`Workspace.ApprovedFiles`), which every write
 *   checks under the file's lock just before it lands.
 * - No answer within the wait (or no channel at all): the call is refused
 *   with `ApprovalPending`, naming the request; once it is approved, the same
 *   call (same path, caller and arguments; a read proof aside) runs without
 *   asking again, if the files still hold the approved bytes.
 * - A file changed since the approval: `ApprovalStale`, with the new diff
 *   filed as a new request to approve.
 *
 * @since 0.2.0
 */
import { createHash, randomUUID } from "node:crypto"
import { ToolError, Trust } from "@ugent/core"
import { Workspace } from "@ugent/tools"
import { ApprovalStore, type StoreError } from "@ugent/wrappers"
import { Clock, Context, Duration, Effect, Option, Schema } from "effect"
import * as Human from "../Human.ts"
import type { Caller } from "./Caller.ts"
import type { Route } from "./Route.ts"

/**
 * The call waits for a person's approval under `id`: nothing ran. Once the
 * request is approved, the same call made again runs without asking again.
 *
 * @category errors
 * @since 0.2.0
 */
export class ApprovalPending extends Schema.TaggedError<ApprovalPending>()("ApprovalPending", {
  tool: Schema.String,
  id: Schema.String,
  expiresAt: Schema.Number,
  /** `timeout`: nobody answered within the wait; `no-channel`: nobody could be asked now. */
  reason: Schema.Literals(["timeout", "no-channel"]),
  waitedMillis: Schema.optionalKey(Schema.Number),
  /** `true` when the request lives only in this server (memory stores): no other process can answer it. */
  inMemory: Schema.optionalKey(Schema.Boolean)
}) {
  static readonly kind: ToolError.Kind = "denied"
  override get message(): string {
    const why =
      this.reason === "timeout"
        ? `nobody answered within ${this.waitedMillis ?? 0} ms`
        : "nobody can be asked on this connection"
    // A request kept only in this server's memory is answered through this server, not by another process.
    const how =
      this.inMemory === true
        ? `POST /v1/pending/${this.id} {"answer":"approve"} to this server, or the client's prompt (this server keeps requests in memory: \`ugent approve\` cannot reach them)`
        : `\`ugent approve ${this.id}\` (or --deny), POST /v1/pending/${this.id} {"answer":"approve"}, or the client's prompt`
    return `${this.tool} did not run: it needs a person's approval and ${why}. The request is pending under ${this.id} until ${new Date(this.expiresAt).toISOString()}; a person answers it with ${how}. Once it is approved, make the same call again with the same arguments: it then runs without asking. Tell the user it waits for their approval.`
  }
}

/**
 * An approval was given for other bytes: a file the call writes changed
 * since it was approved. Nothing ran; the change as it would be now is
 * filed as a new request (`pending`), with its diff.
 *
 * @category errors
 * @since 0.2.0
 */
export class ApprovalStale extends Schema.TaggedError<ApprovalStale>()("ApprovalStale", {
  tool: Schema.String,
  id: Schema.String,
  files: Schema.Array(Schema.String),
  pending: Schema.String,
  preview: Schema.optionalKey(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "conflict"
  override get message(): string {
    const diff = this.preview === undefined ? "" : ` The change it would make now:\n${clip(this.preview, 4_000)}`
    return `${this.tool} did not run: it was approved (${this.id}) for other bytes than the files hold now (${this.files.join(", ")} changed since). The new change waits for approval under ${this.pending} (\`ugent approve ${this.pending}\`); once approved, make the same call again.${diff}`
  }
}

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max)}\n…`)

/** How long a request waits for an answer before it expires, unless the recipe says (24 hours). */
export const defaultExpiry: Duration.Duration = Duration.hours(24)

/** How often a waiting call looks for an answer given elsewhere (another channel, process or server). */
const pollEvery = Duration.millis(200)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** JSON with sorted keys: the same arguments always give the same key. */
const canonical = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canonical).join(",")}]`
    : isRecord(v)
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
          .join(",")}}`
      : (JSON.stringify(v) ?? "null")

/** The call's arguments as a person is shown them and the key compares them: JSON, no read proof, no dry run. */
const argumentsOf = (decoded: unknown): unknown => {
  const shown = Human.jsonOf(decoded)
  if (!isRecord(shown)) return shown
  const { proof: _, dryRun: __, ...rest } = shown
  return rest
}

/**
 * The key of a call: its workspace (the root's real path; servers sharing a
 * store may serve others), its path, its caller and its arguments (a proof
 * is left out: it changes with every read, and the files' hashes bind the
 * bytes instead).
 *
 * @category approving
 * @since 0.2.0
 */
export const keyOf = (root: string | undefined, path: string, observerId: string, decoded: unknown): string =>
  createHash("sha256")
    .update(canonical([root ?? null, path, observerId, argumentsOf(decoded)]))
    .digest("hex")

/**
 * Whether a stored request is one of this workspace's: its key, made again
 * with this root, is its key. Servers of other workspaces sharing a store
 * neither list nor answer each other's requests.
 *
 * @category approving
 * @since 0.2.0
 */
export const ofWorkspace = (root: string | undefined, approval: ApprovalStore.Approval): boolean =>
  keyOf(root, approval.tool, approval.observerId, approval.input) === approval.key

/** The most bytes hashed of one file; a larger one is not bound (its write's own proof still is). */
const maxHashedBytes = 64 * 1024 * 1024

/**
 * The files a call would write, with their hashes now: the `path` of a tool
 * that writes files, resolved in the workspace (a path it refuses binds
 * nothing: the tool refuses it too).
 */
const boundFiles = (
  route: Route,
  decoded: unknown,
  workspace: Workspace.WorkspaceShape | undefined
): Effect.Effect<ReadonlyArray<ApprovalStore.BoundFile>> => {
  if (workspace === undefined || !route.entry.tool.effects.writesFs) return Effect.succeed([])
  if (!isRecord(decoded) || typeof decoded.path !== "string") return Effect.succeed([])
  return workspace.resolveForWrite(decoded.path).pipe(
    Effect.flatMap((resolved) =>
      workspace.readFile(resolved, { maxBytes: maxHashedBytes, text: false }).pipe(
        Effect.map(
          (read): ReadonlyArray<ApprovalStore.BoundFile> => [
            { path: resolved.relative, hash: createHash("sha256").update(read.bytes).digest("hex") }
          ]
        ),
        Effect.catchTag("NotFound", () => Effect.succeed([{ path: resolved.relative, hash: null }]))
      )
    ),
    Effect.catch(() => Effect.succeed([]))
  )
}

const sameFiles = (a: ReadonlyArray<ApprovalStore.BoundFile>, b: ReadonlyArray<ApprovalStore.BoundFile>) =>
  a.length === b.length && a.every((f, i) => f.path === b[i]!.path && f.hash === b[i]!.hash)

/** The files' approved hashes, as the workspace's writes check them. */
const filesMap = (files: ReadonlyArray<ApprovalStore.BoundFile>): ReadonlyMap<string, string | null> =>
  new Map(files.map((f) => [f.path, f.hash]))

/**
 * What the road needs to admit an approved call.
 *
 * @category models
 * @since 0.2.0
 */
export interface Services {
  readonly store: ApprovalStore.ApprovalStoreShape
  readonly workspace: Workspace.WorkspaceShape | undefined
}

/**
 * Admits a call that needs approval (see the module): succeeds with the
 * approved files' hashes, for the context the call runs in, or fails with
 * why it may not run.
 *
 * @category approving
 * @since 0.2.0
 */
export const admit = (
  services: Services,
  route: Route,
  caller: Caller,
  request: Trust.ApprovalRequest,
  decoded: unknown
): Effect.Effect<
  ReadonlyMap<string, string | null>,
  | ApprovalPending
  | ApprovalStale
  | ToolError.ApprovalDenied
  | ApprovalStore.ApprovalExpired
  | ApprovalStore.UnknownApproval
  | ApprovalStore.AlreadyAnswered
  | StoreError.StoreError
> =>
  Effect.gen(function* () {
    const { store } = services
    const files = yield* boundFiles(route, decoded, services.workspace)
    const key = keyOf(services.workspace?.root, route.path, caller.observer.id, decoded)
    const found = yield* store.find(key)
    let now = yield* Clock.currentTimeMillis
    const file = () =>
      Effect.gen(function* () {
        const id = `ap-${randomUUID().slice(0, 13)}`
        const expiry = caller.recipe.approvalExpirySeconds
        const expiresAt = now + (expiry === undefined ? Duration.toMillis(defaultExpiry) : expiry * 1000)
        const approval: ApprovalStore.Approval = {
          id,
          key,
          tool: route.path,
          observerId: caller.observer.id,
          input: argumentsOf(decoded) ?? null,
          arguments: Human.argumentsLine(request.input),
          text: Human.approvalText({ ...request, id }),
          ...(request.preview === undefined ? {} : { preview: request.preview }),
          files,
          status: "pending",
          createdAt: now,
          expiresAt
        }
        yield* store.create(approval)
        return approval
      })
    if (found !== undefined && found.status === "approved" && found.expiresAt > now) {
      if (!sameFiles(found.files, files)) {
        const fresh = yield* file()
        const changed = found.files
          .filter((f) => files.find((g) => g.path === f.path)?.hash !== f.hash)
          .map((f) => f.path)
        return yield* new ApprovalStale({
          tool: route.path,
          id: found.id,
          files: changed,
          pending: fresh.id,
          ...(request.preview === undefined ? {} : { preview: request.preview })
        })
      }
      // Another call of the same bytes may have used it first: then this one is asked anew.
      if (yield* store.use(found.id, now)) return filesMap(files)
    }
    const waiting =
      found !== undefined && found.status === "pending" && found.expiresAt > now && sameFiles(found.files, files)
        ? found
        : yield* file()
    const timeout = yield* Trust.ApprovalTimeout
    const approver = yield* Trust.Approver
    const channel = yield* Human.Current
    const by = Option.isSome(channel) ? channel.value.name : "approver"
    const asked = approver.approve({ ...request, id: waiting.id }).pipe(
      Effect.flatMap((answer) =>
        answer === "no-approver"
          ? Effect.succeed("no-channel" as const)
          : Effect.flatMap(Clock.currentTimeMillis, (at) =>
              store.answer(waiting.id, answer === true ? "approved" : "denied", { channel: by, now: at }).pipe(
                // Answered elsewhere first: that answer holds.
                Effect.catchTag("AlreadyAnswered", (e) => Effect.succeed({ status: e.status })),
                Effect.map((a) => a.status)
              )
            )
      )
    )
    // An answer given elsewhere (another channel, process or server) is seen within a poll.
    const answeredElsewhere = Effect.gen(function* () {
      while (true) {
        yield* Effect.sleep(pollEvery)
        const seen = yield* store.get(waiting.id)
        if (seen !== undefined && seen.status !== "pending") return seen.status
      }
    })
    const status = yield* Effect.raceFirst(asked, answeredElsewhere).pipe(Effect.timeoutOption(timeout))
    now = yield* Clock.currentTimeMillis
    if (Option.isNone(status) || status.value === "no-channel") {
      return yield* new ApprovalPending({
        tool: route.path,
        id: waiting.id,
        expiresAt: waiting.expiresAt,
        ...(Option.isNone(status)
          ? { reason: "timeout" as const, waitedMillis: Duration.toMillis(timeout) }
          : { reason: "no-channel" as const }),
        ...(store.durable === true ? {} : { inMemory: true })
      })
    }
    if (status.value === "denied") return yield* new ToolError.ApprovalDenied({ tool: route.path, reason: "denied" })
    if (status.value === "approved" && (yield* store.use(waiting.id, now))) return filesMap(files)
    return yield* new ApprovalStore.AlreadyAnswered({ id: waiting.id, tool: route.path, status: status.value })
  })

/**
 * The context an approved call runs in: its files' approved hashes, which
 * every write checks under the file's lock.
 *
 * @category approving
 * @since 0.2.0
 */
export const provide = (context: Context.Context<never>, files: ReadonlyMap<string, string | null>) =>
  Context.add(context, Workspace.ApprovedFiles, files)
