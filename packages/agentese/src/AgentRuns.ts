/**
 * An agent run that waits on a person, kept so it can go on later: when a
 * run's calls are pending approval (`ApprovalPending`), its conversation is
 * stored in the workspace (`.ugent/runs/<id>.json`) with the ids it waits
 * on, and `ugent agent --resume <id>` continues it once they are answered,
 * the way an interrupted run of other agent kits resumes from its state.
 * The approved call, made again by the model with the same arguments, then
 * runs without asking.
 *
 * @since 0.2.0
 */
import { randomUUID } from "node:crypto"
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Schema } from "effect"
import { Prompt } from "effect/ai"
import type * as Agent from "./Agent.ts"

/**
 * What is kept of a waiting run.
 *
 * @category models
 * @since 0.2.0
 */
export interface Stored {
  readonly id: string
  /** When it was stored (ms since the epoch). */
  readonly at: number
  /** The approvals it waits on. */
  readonly pending: ReadonlyArray<string>
  /** The conversation so far. */
  readonly prompt: Prompt.Prompt
}

/**
 * A run that cannot go on: no such id, or a file that is not a stored run.
 *
 * @category errors
 * @since 0.2.0
 */
export class RunNotFound extends Schema.TaggedError<RunNotFound>()("RunNotFound", {
  id: Schema.String,
  problem: Schema.String
}) {
  override get message(): string {
    return `No waiting agent run ${this.id}: ${this.problem}. The runs that wait are the files in .ugent/runs/ of the workspace.`
  }
}

const File = Schema.Struct({
  id: Schema.String,
  at: Schema.Number,
  pending: Schema.Array(Schema.String),
  prompt: Prompt.Prompt
})
const FileJson = Schema.fromJsonString(File)

/** A run id is made here, so a name from outside (`--resume`) is only a file name when it has this shape. */
const idPattern = /^run-[0-9a-f]{12}$/

const dirOf = (root: string) => join(root, ".ugent", "runs")

/**
 * The approvals a run's calls wait on, in the order asked.
 *
 * @category reading
 * @since 0.2.0
 */
export const pendingOf = (run: Agent.Result): ReadonlyArray<string> =>
  run.steps.flatMap((step) =>
    step.calls.flatMap((call) =>
      call.outcome !== undefined && !call.outcome.ok && call.outcome.error._tag === "ApprovalPending"
        ? [String(call.outcome.error.id)]
        : []
    )
  )

/**
 * Stores a run that waits on approvals; its id to resume it with.
 *
 * @category storing
 * @since 0.2.0
 */
export const store = (root: string, run: Agent.Result, pending: ReadonlyArray<string>): Effect.Effect<string> =>
  Effect.gen(function* () {
    const id = `run-${randomUUID().replaceAll("-", "").slice(0, 12)}`
    const text = yield* Schema.encodeEffect(FileJson)({ id, at: Date.now(), pending, prompt: run.prompt }).pipe(
      Effect.orDie
    )
    yield* Effect.sync(() => {
      mkdirSync(dirOf(root), { recursive: true })
      // Written whole, then renamed: a reader never sees half a run.
      const to = join(dirOf(root), `${id}.json`)
      writeFileSync(`${to}.tmp`, text, { mode: 0o600 })
      renameSync(`${to}.tmp`, to)
    })
    return id
  })

/**
 * The stored run of an id.
 *
 * @category storing
 * @since 0.2.0
 */
export const load = (root: string, id: string): Effect.Effect<Stored, RunNotFound> =>
  Effect.gen(function* () {
    if (!idPattern.test(id)) {
      return yield* new RunNotFound({ id, problem: "a run id looks like run-1a2b3c4d5e6f, as ugent agent printed it" })
    }
    const text = yield* Effect.try({
      try: () => {
        // Opened without blocking or following a link, and read only if it is a file (never a FIFO).
        const fd = openSync(
          join(dirOf(root), `${id}.json`),
          constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW
        )
        try {
          if (!fstatSync(fd).isFile()) throw new Error("not a file")
          return readFileSync(fd, "utf8")
        } finally {
          closeSync(fd)
        }
      },
      catch: () => new RunNotFound({ id, problem: "there is no such run in this workspace" })
    })
    return yield* Schema.decodeUnknownEffect(FileJson)(text).pipe(
      Effect.mapError(() => new RunNotFound({ id, problem: "its file is not a stored run" }))
    )
  })

/**
 * The prompt that continues a stored run: its conversation, then the
 * person's word (by default, that the approvals are answered).
 *
 * @category resuming
 * @since 0.2.0
 */
export const resumePrompt = (stored: Stored, word?: string | undefined): Prompt.Prompt =>
  Prompt.concat(
    stored.prompt,
    Prompt.make(
      word ??
        `The approvals you waited on (${stored.pending.join(", ")}) have been answered. Go on with the task: make the calls that waited again, with the same arguments.`
    )
  )
