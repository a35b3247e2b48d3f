/**
 * What the git write tools share: one write at a time per repository in this
 * process (git's own `index.lock` guards against other processes), the
 * commit message cleaned the same way for both backends, who commits, branch
 * names checked before git sees them, the working tree's changes kept as a
 * checkpoint, and the text a person approving a write is shown.
 *
 * @internal
 */
import { Clock, Context, Effect, Semaphore } from "effect"
import type { StateError } from "../../internal/workspace/state.ts"
import type * as Workspace from "../../Workspace.ts"
import { type GitFailed, GitWriteRefused } from "../GitError.ts"
import type { GitBackendShape, Identity, Repository, Signature } from "./model.ts"
import type * as Results from "./results.ts"

/**
 * Who commits when the repository's configuration names no user: the host
 * may set it (a server's operator); `undefined` refuses the commit.
 */
export const CommitIdentity = Context.Reference<Identity | undefined>("ugent/tools/GitCommitIdentity", {
  defaultValue: () => undefined
})

const locks = new Map<string, Semaphore.Semaphore>()

/** Runs `effect` alone among this process's git writes to the repository. */
export const exclusive = <A, E, R>(repo: Repository, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  let lock = locks.get(repo.commonDir)
  if (lock === undefined) {
    lock = Semaphore.makeUnsafe(1)
    locks.set(repo.commonDir, lock)
  }
  return lock.withPermit(effect)
}

/**
 * The message as both backends commit it: no carriage returns, no blank
 * lines before it, no trailing whitespace, one final newline; `undefined`
 * when nothing is left or it holds a NUL byte (git would cut it there).
 */
export const cleanMessage = (message: string): string | undefined => {
  if (message.includes("\u0000")) return undefined
  const text = message.replace(/\r/g, "").replace(/^\n+/, "").trimEnd()
  return text === "" ? undefined : `${text}\n`
}

/** The configured user of the repository (its config first, then the host's), or the refusal. */
export const identityOf = (
  backend: GitBackendShape,
  repo: Repository,
  operation: string
): Effect.Effect<Identity, GitWriteRefused | GitFailed> =>
  Effect.gen(function* () {
    const config = yield* backend.writes.config(repo)
    const host = yield* CommitIdentity
    const name = config.name ?? host?.name
    const email = config.email ?? host?.email
    if (name === undefined || name.trim() === "" || email === undefined || email.trim() === "") {
      return yield* new GitWriteRefused({ operation, reason: "no-identity" })
    }
    return { name, email }
  })

/** Who and when, from the clock (UTC): the same second for author and committer. */
export const signatureOf = (who: Identity): Effect.Effect<Signature> =>
  Effect.map(Clock.currentTimeMillis, (ms) => ({ ...who, timestamp: Math.floor(ms / 1000), zoneMinutes: 0 }))

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const forbidden = /[\u0000-\u0020\u007f~^:?*[\\]|\.\.|@\{|\/\/|^\/|\/$|\.$|^@$|^-/

/** Whether git would take `name` as a new branch name (git check-ref-format's rules; never option-like). */
export const validBranchName = (name: string): boolean =>
  name !== "" &&
  name.length <= 255 &&
  name !== "HEAD" &&
  !forbidden.test(name) &&
  name.split("/").every((part) => part !== "" && !part.startsWith(".") && !part.endsWith(".lock"))

/**
 * Runs a write that changes the working tree, kept as one checkpoint when
 * the workspace keeps them: a failed one too (a pop stopped by a conflict
 * has written files), so a restore can take back what it did.
 */
export const captured = <A, E, R>(
  ws: Workspace.WorkspaceShape,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<readonly [A, string | undefined], E | StateError, R> =>
  ws.checkpoints === undefined
    ? Effect.map(effect, (a) => [a, undefined] as const)
    : Effect.flatMap(ws.checkpoints.capture(Effect.result(effect)), ([result, entry]) =>
        result._tag === "Success" ? Effect.succeed([result.success, entry?.id] as const) : Effect.fail(result.failure)
      )

const prefix = { context: " ", add: "+", delete: "-" } as const

/** Changes as unified-diff text, for a person approving a write (a blocked file's content is not shown). */
export const renderChanges = (changes: Results.Changes): string => {
  const out: Array<string> = []
  for (const file of changes.files) {
    out.push(`diff --git a/${file.oldPath ?? file.path} b/${file.path}`)
    if (file.status === "added") out.push("new file")
    if (file.status === "deleted") out.push("deleted file")
    if (file.oldPath !== undefined) out.push(`rename from ${file.oldPath}`, `rename to ${file.path}`)
    if (file.redacted === true) {
      out.push("(content not shown: a name the workspace blocks)")
      continue
    }
    if (file.binary) {
      out.push("Binary files differ")
      continue
    }
    for (const h of file.hunks) {
      out.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`)
      for (const l of h.lines) {
        out.push(`${prefix[l.type]}${l.content}`)
        if (l.noNewlineAtEnd === true) out.push("\\ No newline at end of file")
      }
    }
    if (file.truncated === true) out.push("(more changes left out)")
  }
  if (changes.omittedFiles > 0) out.push(`(${changes.omittedFiles} more files left out)`)
  return out.join("\n")
}
