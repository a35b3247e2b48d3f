/**
 * Restoring the workspace to how it was before a checkpoint: every file that
 * checkpoint or a later one changed gets back the content it had before the
 * first of them (or is removed, if it did not exist). All or nothing:
 * every file is inspected first (a link, a directory, a path now outside,
 * a content changed since by someone else refuses the whole restore, naming
 * the files), then the files are written one by one, each write checking
 * under the file's lock that the file still holds what was inspected; if
 * one fails, those already written are put back. The restore is itself a
 * checkpoint (its "before" is what the files held), so it can be undone.
 *
 * @internal
 */
import { Changes, ReadProof } from "@ugent/core"
import { Effect, Option } from "effect"
import { CheckpointNotFound, FileTooLarge, RestoreRefused } from "./errors.ts"
import type { Change, Entry, Store, Version } from "./checkpoints.ts"
import { readVerified } from "./open.ts"
import { type Jail, type ResolvedPath, resolveEntry, resolveForWrite } from "./resolve.ts"
import type { StateError } from "./state.ts"
import { relativeTo } from "./paths.ts"
import { removeAtomic, removeEmptyDirectory, type WriteError, writeAtomic } from "./write.ts"

export interface RestoredFile {
  readonly path: string
  readonly change: "created" | "modified" | "deleted"
  /** A proof of the restored content, whole (absent for a removed file). */
  readonly proof: ReadProof.ReadProof | undefined
}

export interface Restored {
  readonly to: string
  /** The ids of the checkpoints undone, newest first. */
  readonly undone: ReadonlyArray<string>
  readonly files: ReadonlyArray<RestoredFile>
  /** The restore's own checkpoint (absent when nothing had to change). */
  readonly checkpoint: Entry | undefined
}

export type RestoreError = RestoreRefused | CheckpointNotFound | StateError | WriteError

type Reason = RestoreRefused["reason"]

interface Step {
  readonly path: string
  /** Directories the first undone change made for the file, removed with it when empty. */
  readonly dirs: ReadonlyArray<string>
  readonly target: Version | null
  readonly current: Version | null
  readonly currentBytes: Uint8Array | undefined
  readonly targetBytes: Uint8Array | undefined
}

/** What each file must go back to (its content before the first undone checkpoint) and what the last one left. */
const planOf = (undone: ReadonlyArray<Entry>) => {
  const plan = new Map<string, { target: Version | null; expected: Version | null; dirs: ReadonlyArray<string> }>()
  for (const entry of undone) {
    for (const file of entry.files) {
      const found = plan.get(file.path)
      if (found === undefined)
        plan.set(file.path, {
          target: file.before,
          expected: file.after,
          dirs: file.before === null ? (file.dirs ?? []) : []
        })
      else found.expected = file.after
    }
  }
  return plan
}

const sameContent = (a: Version | null, b: { readonly hash: string } | null) =>
  a === null ? b === null : b !== null && a.hash === b.hash

export const restore = (
  jail: Jail,
  store: Store,
  to: string,
  proofs: ReadonlyArray<ReadProof.ReadProof>
): Effect.Effect<Restored, RestoreError> =>
  store.restoring
    .withPermitsIfAvailable(1)(run(jail, store, to, proofs))
    .pipe(
      Effect.flatMap((done) =>
        Option.isSome(done)
          ? Effect.succeed(done.value)
          : Effect.fail(new RestoreRefused({ to, reason: "busy", files: [] }))
      )
    )

const run = (
  jail: Jail,
  store: Store,
  to: string,
  proofs: ReadonlyArray<ReadProof.ReadProof>
): Effect.Effect<Restored, RestoreError> =>
  Effect.gen(function* () {
    const entries = yield* store.entries
    const start = entries.findIndex((e) => e.id === to)
    if (start < 0) return yield* new CheckpointNotFound({ id: to })
    const undone = entries.slice(start)
    const plan = planOf(undone)
    const scope = ReadProof.scopeOf(jail.root)
    // The proofs the caller passed that are genuine, of this workspace and whole: by path, the hashes read.
    const read = new Map<string, Set<string>>()
    for (const given of proofs) {
      const verified = yield* ReadProof.verify(given)
      if (Option.isNone(verified)) continue
      const proof = verified.value
      if (proof.workspace !== scope || proof.coverage._tag !== "Whole") continue
      const hashes = read.get(proof.path) ?? new Set<string>()
      hashes.add(proof.hash)
      read.set(proof.path, hashes)
    }
    const problems = new Map<Reason, Array<string>>()
    const problem = (reason: Reason, file: string) => {
      const files = problems.get(reason) ?? []
      files.push(file)
      problems.set(reason, files)
    }
    const steps: Array<Step> = []
    for (const [file, { target, expected, dirs }] of [...plan].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (jail.policy.blockedBy(file) !== undefined) {
        problem("blocked", file)
        continue
      }
      const entry = yield* resolveEntry(jail, file).pipe(Effect.option)
      if (Option.isNone(entry) || entry.value.relative !== file) {
        problem("outside", file)
        continue
      }
      const kind = entry.value.kind
      if (kind === "symlink" || kind === "directory") {
        problem(kind, file)
        continue
      }
      if (kind !== "file" && kind !== "missing") {
        problem("not-a-file", file)
        continue
      }
      let current: Version | null = null
      let currentBytes: Uint8Array | undefined
      if (kind === "file") {
        const bytes = yield* readVerified(jail, entry.value, {
          maxBytes: store.options.maxFileBytes,
          text: false
        }).pipe(
          Effect.map((r) => r.bytes),
          Effect.catchTag("FileTooLarge", (e: FileTooLarge) => Effect.succeed(e)),
          Effect.catchTag("BinaryFile", (e) => Effect.die(e))
        )
        if (bytes instanceof FileTooLarge) {
          problem("uncaptured", file)
          continue
        }
        currentBytes = new Uint8Array(bytes)
        current = { hash: ReadProof.hash(currentBytes), size: currentBytes.length, kept: true }
      }
      if (sameContent(target, current)) continue
      // Only a content someone else made is at stake: what the undone checkpoints left, a missing file, or one read now is not.
      if (current !== null && !sameContent(expected, current) && read.get(file)?.has(current.hash) !== true) {
        problem("changed", file)
        continue
      }
      let targetBytes: Uint8Array | undefined
      if (target !== null) {
        targetBytes = yield* store.content(target)
        if (targetBytes === undefined) {
          problem(target.kept ? "damaged" : "uncaptured", file)
          continue
        }
      }
      steps.push({ path: file, dirs, target, current, currentBytes, targetBytes })
    }
    const order: ReadonlyArray<Reason> = [
      "outside",
      "symlink",
      "directory",
      "not-a-file",
      "blocked",
      "uncaptured",
      "damaged",
      "changed"
    ]
    for (const reason of order) {
      const files = problems.get(reason)
      if (files !== undefined) return yield* new RestoreRefused({ to, reason, files })
    }
    // What the files hold now is kept first: the restore's own checkpoint must be able to put it back.
    for (const step of steps) if (step.currentBytes !== undefined) yield* store.keep(step.currentBytes)
    const done: Array<Step> = []
    const made = new Map<string, ReadonlyArray<string>>()
    for (const step of steps) {
      const applied = yield* Effect.exit(apply(jail, step.path, step.current, step.target, step.targetBytes))
      if (applied._tag === "Success") {
        done.push(step)
        if (applied.value.length > 0) made.set(step.path, applied.value)
        continue
      }
      // Put back, newest first, what this restore already wrote; a failure there leaves that file as restored.
      for (const back of done.reverse()) {
        yield* Effect.ignore(apply(jail, back.path, back.target, back.current, back.currentBytes))
      }
      const error = applied.cause.reasons.find((r) => r._tag === "Fail")?.error
      if (
        error !== undefined &&
        (error._tag === "ProofRejected" || error._tag === "AlreadyExists" || error._tag === "ConcurrentChange")
      ) {
        return yield* new RestoreRefused({ to, reason: "concurrent-change", files: [step.path] })
      }
      return yield* Effect.failCause(applied.cause)
    }
    // The directories the undone changes made, now empty, go too (deepest first); one holding anything stays.
    const dirs = [...new Set(done.filter((s) => s.target === null).flatMap((s) => s.dirs))].sort().reverse()
    for (const dir of dirs) {
      yield* Effect.ignore(removeEmptyDirectory(jail, `${jail.root}/${dir}`))
    }
    const files: Array<RestoredFile> = []
    for (const step of done) {
      const real = yield* resolveEntry(jail, step.path).pipe(Effect.option)
      if (Option.isSome(real)) {
        yield* Changes.publish({
          path: real.value.real,
          relative: step.path,
          kind: step.target === null ? "deleted" : step.current === null ? "created" : "modified"
        })
      }
      files.push({
        path: step.path,
        change: step.target === null ? "deleted" : step.current === null ? "created" : "modified",
        proof:
          step.targetBytes === undefined
            ? undefined
            : yield* ReadProof.issue({
                path: step.path,
                workspace: scope,
                content: step.targetBytes,
                coverage: { _tag: "Whole" }
              })
      })
    }
    const changes: Array<Change> = done.map((step) => {
      const created = made.get(step.path)?.map((d) => relativeTo(jail.root, d)) ?? []
      return {
        path: step.path,
        before: step.current,
        after: step.target,
        ...(created.length > 0 ? { dirs: created } : {})
      }
    })
    const checkpoint = changes.length === 0 ? undefined : yield* store.record(changes)
    return { to, undone: undone.map((e) => e.id).reverse(), files, checkpoint }
  })

/** Takes one file from `from` (what it must hold now) to `to`, checked under its lock; returns the directories made. */
const apply = (
  jail: Jail,
  file: string,
  from: Version | null,
  to: Version | null,
  bytes: Uint8Array | undefined
): Effect.Effect<ReadonlyArray<string>, WriteError> =>
  Effect.gen(function* () {
    if (to === null) {
      if (from === null) return []
      const resolved: ResolvedPath = yield* resolveForWrite(jail, file)
      yield* removeAtomic(jail, resolved, from.hash)
      return []
    }
    const resolved = yield* resolveForWrite(jail, file)
    const written = yield* writeAtomic(
      jail,
      resolved,
      bytes!,
      from === null ? { mode: "create" } : { mode: "replace", expectedHash: from.hash }
    )
    return written.created
  })
