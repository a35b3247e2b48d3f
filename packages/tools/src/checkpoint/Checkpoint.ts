/**
 * The `checkpoint` family: `self.tools.checkpoint.list` shows the
 * workspace's checkpoints newest first (what each call changed, file by
 * file), and `self.tools.checkpoint.restore` puts the workspace back as it
 * was before one of them (see `Checkpoints`). The family offers its tools
 * only when the host's workspace keeps checkpoints.
 *
 * @since 0.3.0
 */
import { Family, Observer, ReadProof, Tool, ToolError, Trust } from "@ugent/core"
import { Effect, Option, Schema } from "effect"
import * as Checkpoints from "../Checkpoints.ts"
import { checkProofFor, checkUnchanged, readForProof } from "../internal/workspace/causal.ts"
import { isoTime } from "../internal/workspace/isoTime.ts"
import * as StateDir from "../StateDir.ts"
import * as Workspace from "../Workspace.ts"

/**
 * One file of a checkpoint: how it changed, its content's hash and size on
 * each side, and whether both sides were kept (a side not kept cannot be
 * restored).
 *
 * @category schemas
 * @since 0.3.0
 */
export const FileChange = Schema.Struct({
  path: Schema.String,
  change: Schema.Literals(["created", "modified", "deleted"]),
  before: Schema.optionalKey(Schema.Struct({ hash: Schema.String, size: Schema.Number })),
  after: Schema.optionalKey(Schema.Struct({ hash: Schema.String, size: Schema.Number })),
  kept: Schema.Boolean
})

/**
 * One checkpoint as `checkpoint.list` shows it.
 *
 * @category schemas
 * @since 0.3.0
 */
export const Listed = Schema.Struct({
  id: Schema.String,
  /** ISO 8601. */
  at: Schema.String,
  caller: Schema.String,
  callId: Schema.optionalKey(Schema.String),
  tool: Schema.optionalKey(Schema.String),
  files: Schema.Array(FileChange)
})

/**
 * @category models
 * @since 0.3.0
 */
export type Listed = typeof Listed.Type

const shorten = (v: Checkpoints.Version) => ({ hash: v.hash, size: v.size })

const listed = (c: Checkpoints.Checkpoint): Listed => ({
  id: c.id,
  at: isoTime(c.at),
  caller: c.caller,
  ...(c.callId === undefined ? {} : { callId: c.callId }),
  ...(c.tool === undefined ? {} : { tool: c.tool }),
  files: c.files.map((f) => ({
    path: f.path,
    change: f.before === null ? "created" : f.after === null ? "deleted" : "modified",
    ...(f.before === null ? {} : { before: shorten(f.before) }),
    ...(f.after === null ? {} : { after: shorten(f.after) }),
    kept: (f.before === null || f.before.kept) && (f.after === null || f.after.kept)
  }))
})

// The store could not be read or written: `.ugent` is not as ugent made it, or the file system failed.
const storeErrors = [StateDir.StateRefused, Workspace.FileSystemError] as const

const ListInput = Schema.Struct({
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })).annotate({
      description: "How many checkpoints to show, newest first (default 20, at most 200)."
    })
  ),
  path: Schema.optionalKey(
    Schema.String.annotate({ description: "Only checkpoints that changed this file (relative to the root)." })
  )
})

/**
 * `checkpoint.list`: the checkpoints, newest first, each with its `id`.
 *
 * @category tools
 * @since 0.3.0
 */
export const list = Tool.make({
  name: "checkpoint.list",
  description:
    "List the workspace's checkpoints, newest first: each write, edit, shell command or restore that changed files, with the files, caller and time. self.tools.checkpoint.restore undoes one and all after it.",
  input: ListInput,
  output: Schema.Struct({ checkpoints: Schema.Array(Listed), total: Schema.Int }),
  failure: Schema.Union([...storeErrors]),
  trust: 0,
  effects: { readsFs: true },
  run: (input) =>
    Effect.gen(function* () {
      const all = yield* Checkpoints.list
      const chosen =
        input.path === undefined
          ? all
          : all.filter((c) => c.files.some((f) => f.path === input.path!.replace(/^\.\//, "")))
      return { checkpoints: chosen.slice(0, input.limit ?? 20).map(listed), total: chosen.length }
    })
})

const RestoreInput = Schema.Struct({
  to: Schema.String.check(Schema.isNonEmpty()).annotate({
    description: "The id (from self.tools.checkpoint.list) of the first checkpoint to undo."
  }),
  proofs: Schema.optionalKey(
    Schema.Array(ReadProof.ReadProofFromToken).annotate({
      description:
        "Proofs of whole-file reads of the files changed since, or by another caller: they may then be overwritten."
    })
  )
})

/**
 * What a restore did.
 *
 * @category schemas
 * @since 0.3.0
 */
export const RestoreOutput = Schema.Struct({
  to: Schema.String,
  /** The checkpoints undone, newest first. */
  undone: Schema.Array(Schema.String),
  files: Schema.Array(
    Schema.Struct({
      path: Schema.String,
      change: Schema.Literals(["created", "modified", "deleted"]),
      /** A proof of the restored content (whole), for an edit without a read. */
      proof: Schema.optionalKey(ReadProof.ReadProofFromToken)
    })
  ),
  /** The restore's own checkpoint: restore to it to undo this restore. */
  checkpoint: Schema.optionalKey(Schema.String)
})

/**
 * Undoing another caller's checkpoint (another observer, or another session
 * of the same one: two MCP clients of one server) takes back their work, so
 * it needs what overwriting (or removing) those files needs: for each file such a
 * checkpoint changed that is there now, a proof of a whole read of its
 * current content among `proofs`; without them, L2 and a confirmation.
 * A caller's own checkpoints need nothing more.
 */
const requireOwnOrRead = (
  ws: Workspace.WorkspaceShape,
  undone: ReadonlyArray<Checkpoints.Checkpoint>,
  input: typeof RestoreInput.Type
) =>
  Effect.gen(function* () {
    const observer = yield* Effect.serviceOption(Observer.Observer)
    const me = Option.isSome(observer) ? observer.value.id : "anonymous"
    // Every connection of one server is the server's observer: its session tells two MCP clients apart.
    const session = (yield* Checkpoints.CurrentCall)?.session
    const theirs = undone.filter(
      (c) => c.caller !== me || (c.session !== undefined && session !== undefined && c.session !== session)
    )
    if (theirs.length === 0) return
    const files = [...new Set(theirs.flatMap((c) => c.files.map((f) => f.path)))].sort()
    const unread: Array<string> = []
    for (const file of files) {
      // A file that is not there (or not a regular file) is overwritten by nothing; the restore judges the rest.
      const target = yield* Effect.option(ws.resolve(file, { expect: "file" }))
      if (Option.isNone(target)) continue
      const read = yield* Effect.option(
        Effect.gen(function* () {
          const given = (input.proofs ?? []).find((p) => p.path === target.value.relative)
          const proof = yield* checkProofFor(ws, target.value, given, true)
          yield* checkUnchanged(target.value, proof, yield* readForProof(ws, target.value, proof))
        })
      )
      if (Option.isNone(read)) unread.push(file)
    }
    if (unread.length === 0) return
    const callers = [...new Set(theirs.map((c) => c.caller))].join(", ")
    yield* Trust.escalate(
      "checkpoint.restore",
      2,
      `the range holds checkpoints of another caller (${callers}); undoing them overwrites ${unread.join(", ")}, which needs a proof of reading each one's current content (pass world.tools.file.read proofs in "proofs"), or L2 and a confirmation`,
      input
    )
  })

/**
 * `checkpoint.restore`: the workspace back as it was before a checkpoint,
 * all or nothing. L1; a file outside the writable globs, or a hook script,
 * needs L2 with a confirmation, as a write would, and so does undoing
 * another caller's checkpoint without proofs of reading the files it
 * changed as they are now.
 *
 * @category tools
 * @since 0.3.0
 */
export const restore = Tool.make({
  name: "checkpoint.restore",
  description:
    'Undo a checkpoint and every later one: each file gets back its content from before (created files go, deleted ones come back). All or nothing; refused, naming the files, if one changed since or was changed by another caller (pass "proofs" of reading them), or is now a link or a directory. A restore is a checkpoint too.',
  input: RestoreInput,
  output: RestoreOutput,
  failure: Schema.Union([
    Checkpoints.RestoreRefused,
    Checkpoints.CheckpointNotFound,
    ToolError.TrustDenied,
    ToolError.ApprovalDenied,
    ReadProof.ProofRejected,
    Workspace.AlreadyExists,
    Workspace.ConcurrentChange,
    ...Workspace.pathErrors,
    Checkpoints.CheckpointRefused,
    StateDir.StateRefused,
    Workspace.ChangedSinceApproval
  ]),
  trust: 1,
  effects: { readsFs: true, writesFs: true, idempotent: false },
  run: (input) =>
    Effect.gen(function* () {
      const ws = yield* Workspace.Workspace
      const store = ws.checkpoints
      if (store === undefined) return yield* new Checkpoints.CheckpointNotFound({ id: input.to })
      const all = yield* store.list
      const at = all.findIndex((c) => c.id === input.to)
      if (at < 0) return yield* new Checkpoints.CheckpointNotFound({ id: input.to })
      // As a write: L1 writes only inside the writable globs, and never a script git runs by itself.
      const files = new Set(all.slice(0, at + 1).flatMap((c) => c.files.map((f) => f.path)))
      const beyond = [...files].filter((f) => ws.hookBy(f) !== undefined || !ws.isWritable(f))
      if (beyond.length > 0) {
        yield* Trust.escalate(
          "checkpoint.restore",
          2,
          `restoring ${beyond.join(", ")} writes outside the paths the workspace policy lets L1 write (or a script git runs by itself), so it needs L2 and a confirmation`,
          input
        )
      }
      yield* requireOwnOrRead(ws, all.slice(0, at + 1), input)
      const done = yield* store.restore(input.to, { proofs: input.proofs ?? [] })
      return {
        to: done.to,
        undone: done.undone,
        files: done.files.map((f) => ({
          path: f.path,
          change: f.change,
          ...(f.proof === undefined ? {} : { proof: f.proof })
        })),
        ...(done.checkpoint === undefined ? {} : { checkpoint: done.checkpoint.id })
      }
    })
})

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/**
 * The family, for a server's `families` option: its tools are offered only
 * when the host's workspace keeps checkpoints.
 *
 * **Example** (No checkpoints, no tools)
 * ```ts
 * import { Checkpoint, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "cp-"))
 * const offered = (checkpoints?: {}) =>
 *   Effect.runPromise(Effect.scoped(Checkpoint.family.build.pipe(Effect.provide(Workspace.layer({ root, checkpoints })))))
 * console.log(Object.keys(await offered()), Object.keys(await offered({})))
 * // => [] [ 'checkpoint.list', 'checkpoint.restore' ]
 * ```
 *
 * @category families
 * @since 0.3.0
 */
export const family = Family.effect({
  name: "checkpoint",
  prefix: "self.tools",
  tools: Effect.gen(function* () {
    const ws = yield* Workspace.Workspace
    const tools = { "checkpoint.list": list, "checkpoint.restore": restore }
    return (ws.checkpoints === undefined ? {} : tools) as Partial<typeof tools>
  }),
  present: {
    "checkpoint.list": (o) => ({
      summary: `${plural(o.total, "checkpoint")}${o.checkpoints.length < o.total ? `, newest ${o.checkpoints.length} shown` : ""}`,
      next: "pass a smaller limit, or a path to see the checkpoints of one file"
    }),
    "checkpoint.restore": (o) => ({
      summary: `Restored to before ${o.to}: ${plural(o.undone.length, "checkpoint")} undone, ${plural(o.files.length, "file")} changed`
    })
  }
})
