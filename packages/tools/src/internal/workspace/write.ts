/**
 * Atomic writes inside the jail. The parent directory is opened and its
 * descriptor verified (created one level at a time through the descriptor of
 * the level above when missing); every later step names files through that
 * descriptor (`/proc/self/fd/<fd>/<name>` on Linux), so a directory swapped
 * for a link after the check cannot redirect the write. The bytes go to a
 * temporary file in the same directory, are flushed, and replace the target
 * in one `rename` (overwrite) or appear under its name with `link`, which
 * fails if the name exists (create, exclusive). A crash leaves the old bytes
 * or no file, never a torn one. The proof check and the rename (or link) run
 * under the entry's lock (`lock.ts`), so two writers with the proof of one
 * version cannot both succeed. Each write first sweeps its directory of
 * temporary files dead writers left (`sweep.ts`).
 *
 * @internal
 */
import { createHash, randomBytes } from "node:crypto"
import { constants, type Stats } from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { ReadProof } from "@ugent/core"
import { Effect, Option, type Scope } from "effect"
import {
  AlreadyExists,
  ChangedSinceApproval,
  type CheckpointRefused,
  ConcurrentChange,
  NotADirectory,
  NotAFile,
  type StateRefused
} from "./errors.ts"
import { ApprovedFiles } from "./approved.ts"
import { entryKey, withEntryLock } from "./lock.ts"
import { fdPath, type OpenError, verifyDescriptor, withVerifiedDirectory } from "./open.ts"
import type { Jail, ResolvedPath } from "./resolve.ts"
import { sweepOnce, tempName, writing } from "./sweep.ts"
import { attempt, call, codeOf, kindOf, mapError } from "./system.ts"

const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
const tempFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
const readFlags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW

export type WriteMode = { readonly mode: "create" } | { readonly mode: "replace"; readonly expectedHash: string }

export type WriteError =
  | OpenError
  | AlreadyExists
  | ReadProof.ProofRejected
  | CheckpointRefused
  | StateRefused
  | ChangedSinceApproval

/**
 * What a file held just before a write replaced it: its hash, its size and,
 * when it was at most the byte limit the writer asked for, its bytes.
 */
export interface Previous {
  readonly hash: string
  readonly size: number
  readonly bytes: Uint8Array | undefined
}

/**
 * Called under the entry's lock once the write is sure to go ahead (the
 * proof holds, the name is free), before the new bytes take the name:
 * `undefined` for a create. A failure stops the write. The checkpoint store
 * keeps the old and new content here, so no write is visible before what it
 * replaced is safe.
 */
export interface Keeper {
  /** The largest previous content passed whole (larger: `bytes` is undefined). */
  readonly maxBytes: number
  readonly keep: (previous: Previous | undefined, created: ReadonlyArray<string>) => Effect.Effect<void, WriteError>
}

const openDirectory = (input: string, at: string) =>
  Effect.acquireRelease(
    call(
      () => fsp.open(at, dirFlags),
      (u) =>
        codeOf(u) === "ELOOP"
          ? new ConcurrentChange({ path: input, retryable: true })
          : mapError(input, "open the directory of", "directory")(u)
    ),
    (handle) => Effect.promise(() => handle.close())
  )

/**
 * Opens the directory that will hold `real`, creating missing levels through
 * the descriptor of the level above, and verifies the final descriptor.
 * Returns the base path that names it.
 */
const openParent = (
  jail: Jail,
  input: string,
  real: string
): Effect.Effect<
  {
    readonly base: string
    readonly handle: fsp.FileHandle
    readonly stats: Stats
    /** The real paths of the directories this call created, outermost first. */
    readonly created: ReadonlyArray<string>
  },
  OpenError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const dir = path.dirname(real)
    const missing: Array<string> = []
    let existing = dir
    while (existing !== jail.root && !(yield* attempt(() => fsp.lstat(existing)).pipe(Effect.isSuccess))) {
      missing.unshift(path.basename(existing))
      existing = path.dirname(existing)
    }
    let handle = yield* openDirectory(input, existing)
    let expected = existing
    const verify = Effect.gen(function* () {
      const st = yield* call(() => handle.stat(), mapError(input, "inspect", "directory"))
      if (!st.isDirectory()) return yield* new NotADirectory({ path: input, kind: kindOf(st) })
      yield* verifyDescriptor(jail, handle.fd, input, expected, st)
      return st
    })
    let stats = yield* verify
    const created: Array<string> = []
    for (const segment of missing) {
      const base = jail.procFd ? fdPath(handle.fd) : expected
      // A level that appeared meanwhile is fine: opening it with O_NOFOLLOW and verifying decides.
      const made = yield* attempt(() => fsp.mkdir(path.join(base, segment))).pipe(
        Effect.as(true),
        Effect.catch((e) =>
          e.code === "EEXIST" ? Effect.succeed(false) : Effect.fail(mapError(input, "create the directory of")(e.cause))
        )
      )
      if (made) created.push(path.join(expected, segment))
      const parent = stats
      handle = yield* openDirectory(input, path.join(base, segment))
      expected = path.join(expected, segment)
      stats = yield* verify
      // As root, a new directory belongs to its parent's owner (see writeAtomic), on the descriptor just verified.
      if (process.geteuid?.() === 0 && parent.uid !== 0 && stats.uid === 0) {
        yield* attempt(() => handle.chown(parent.uid, parent.gid)).pipe(Effect.ignore)
        stats = yield* verify
      }
    }
    return { base: jail.procFd ? fdPath(handle.fd) : expected, handle, stats, created }
  })

/**
 * SHA-256 of what `name` holds now in the verified directory, read in
 * chunks, with the bytes when there are at most `keep` of them; `undefined`
 * if it is gone.
 */
const currentContent = (input: string, at: string, keep: number): Effect.Effect<Previous | undefined, OpenError> =>
  Effect.acquireUseRelease(
    attempt(() => fsp.open(at, readFlags)).pipe(
      Effect.map((handle) => Option.some(handle)),
      Effect.catch((e) =>
        e.code === "ENOENT"
          ? Effect.succeed(Option.none<fsp.FileHandle>())
          : Effect.fail(
              e.code === "ELOOP"
                ? new ConcurrentChange({ path: input, retryable: true })
                : mapError(input, "open", "file")(e.cause)
            )
      )
    ),
    (opened) =>
      Effect.gen(function* () {
        if (opened._tag === "None") return undefined
        const handle = opened.value
        const st = yield* call(() => handle.stat(), mapError(input, "inspect", "file"))
        if (!st.isFile()) return yield* new NotAFile({ path: input, kind: kindOf(st) })
        const hash = createHash("sha256")
        const chunks: Array<Buffer> = []
        let size = 0
        while (true) {
          const chunk = Buffer.allocUnsafe(1 << 16)
          const { bytesRead } = yield* call(() => handle.read(chunk, 0, chunk.length, null), mapError(input, "read"))
          if (bytesRead === 0) break
          hash.update(chunk.subarray(0, bytesRead))
          size += bytesRead
          if (size <= keep) chunks.push(chunk.subarray(0, bytesRead))
          else chunks.length = 0
        }
        const bytes = size <= keep ? new Uint8Array(Buffer.concat(chunks, size)) : undefined
        return { hash: hash.digest("hex"), size, bytes }
      }),
    (opened) => (opened._tag === "Some" ? Effect.promise(() => opened.value.close()) : Effect.void)
  )

/** The hash the running approved call was shown for this file, if it was approved against one (`null`: absent). */
const approvedHash = (jail: Jail, resolved: ResolvedPath) =>
  Effect.map(ApprovedFiles, (files) => files?.get(path.relative(jail.root, resolved.real)))

/**
 * Writes `bytes` to a resolved path atomically. `create` fails with
 * `AlreadyExists` if the name exists; `replace` fails with `ProofRejected`
 * unless the file still hashes to `expectedHash` just before the rename.
 * Returns the real path written and the directories made for it.
 */
export const writeAtomic = (
  jail: Jail,
  resolved: ResolvedPath,
  bytes: Uint8Array,
  mode: WriteMode,
  keeper?: Keeper
): Effect.Effect<{ readonly real: string; readonly created: ReadonlyArray<string> }, WriteError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const input = resolved.input
      const name = path.basename(resolved.real)
      const { base, handle: dir, stats: dirStats, created } = yield* openParent(jail, input, resolved.real)
      yield* sweepOnce(base, path.dirname(resolved.real), (temp) => entryKey(dirStats, temp))
      const target = path.join(base, name)
      const tempBase = tempName(name, randomBytes(6).toString("hex"))
      const temp = path.join(base, tempBase)
      let permissions = 0o666
      // A server running as root gives what it writes to the file's owner, or a new file to its directory's:
      // a root-owned file in a user's workspace is one the user's shell (the sandbox runs as them) cannot change.
      let owner = { uid: dirStats.uid, gid: dirStats.gid }
      if (mode.mode === "replace") {
        const st = yield* attempt(() => fsp.lstat(target)).pipe(Effect.option)
        // The file's own permission bits, never set-user-id, set-group-id or sticky.
        if (st._tag === "Some") {
          permissions = st.value.mode & 0o777
          owner = { uid: st.value.uid, gid: st.value.gid }
        }
      }
      const chown = process.geteuid?.() === 0 && owner.uid !== 0
      // Known as live until it is gone, so no sweep of this process removes it meanwhile.
      yield* writing(entryKey(dirStats, tempBase))
      // The temporary file is removed on every path out, success included (after a link or rename it is gone or a second name).
      yield* Effect.addFinalizer(() => Effect.promise(() => fsp.unlink(temp).catch(() => undefined)))
      yield* Effect.acquireUseRelease(
        call(() => fsp.open(temp, tempFlags, permissions), mapError(input, "write")),
        (handle) =>
          Effect.gen(function* () {
            yield* call(() => handle.writeFile(bytes), mapError(input, "write"))
            if (chown) yield* call(() => handle.chown(owner.uid, owner.gid), mapError(input, "write"))
            if (mode.mode === "replace") yield* call(() => handle.chmod(permissions), mapError(input, "write"))
            yield* call(() => handle.sync(), mapError(input, "write"))
          }),
        (handle) => Effect.promise(() => handle.close())
      )
      const commit: Effect.Effect<void, WriteError> =
        mode.mode === "create"
          ? Effect.gen(function* () {
              // An approved create was shown the name free: a file there then is refused below (AlreadyExists).
              const approved = yield* approvedHash(jail, resolved)
              if (approved !== undefined && approved !== null) return yield* new ChangedSinceApproval({ path: input })
              if (keeper !== undefined) {
                // A create is exclusive: a name already there fails the link below; keeping first costs nothing then.
                yield* keeper.keep(undefined, created)
              }
              const linked = yield* attempt(() => fsp.link(temp, target)).pipe(Effect.result)
              if (linked._tag === "Success") return
              const code = linked.failure.code
              if (code === "EEXIST") return yield* new AlreadyExists({ path: input })
              if (
                code !== "EPERM" &&
                code !== "ENOTSUP" &&
                code !== "EOPNOTSUPP" &&
                code !== "ENOSYS" &&
                code !== "EMLINK"
              ) {
                return yield* Effect.fail(mapError(input, "create")(linked.failure.cause))
              }
              // A file system without hard links: exclusive create, then the content (not atomic, still exclusive).
              yield* Effect.acquireUseRelease(
                call(
                  () => fsp.open(target, tempFlags, permissions),
                  (u) => (codeOf(u) === "EEXIST" ? new AlreadyExists({ path: input }) : mapError(input, "create")(u))
                ),
                (handle) => call(() => handle.writeFile(bytes), mapError(input, "write")),
                (handle) => Effect.promise(() => handle.close())
              )
            })
          : Effect.gen(function* () {
              // Under the lock no writer of this process can rename between this hash and ours.
              const now = yield* currentContent(input, target, keeper?.maxBytes ?? -1)
              const approved = yield* approvedHash(jail, resolved)
              if (approved !== undefined && approved !== (now?.hash ?? null)) {
                return yield* new ChangedSinceApproval({ path: input })
              }
              if (now === undefined) return yield* new ReadProof.ProofRejected({ path: input, reason: "deleted" })
              if (now.hash !== mode.expectedHash) {
                return yield* new ReadProof.ProofRejected({ path: input, reason: "changed" })
              }
              if (keeper !== undefined) yield* keeper.keep(now, created)
              yield* call(() => fsp.rename(temp, target), mapError(input, "replace"))
            })
      yield* withEntryLock(entryKey(dirStats, name), commit)
      yield* attempt(() => dir.sync()).pipe(Effect.ignore)
      return { real: path.join(path.dirname(resolved.real), name), created }
    })
  )

/**
 * Removes a resolved regular file if it still hashes to `expectedHash`,
 * checked under the entry's lock just before the `unlink` (as a replace
 * checks before its rename).
 */
export const removeAtomic = (
  jail: Jail,
  resolved: ResolvedPath,
  expectedHash: string
): Effect.Effect<void, WriteError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const input = resolved.input
      const name = path.basename(resolved.real)
      const { base, handle: dir, stats: dirStats } = yield* openParent(jail, input, resolved.real)
      const target = path.join(base, name)
      yield* withEntryLock(
        entryKey(dirStats, name),
        Effect.gen(function* () {
          const now = yield* currentContent(input, target, -1)
          if (now === undefined) return yield* new ReadProof.ProofRejected({ path: input, reason: "deleted" })
          if (now.hash !== expectedHash) return yield* new ReadProof.ProofRejected({ path: input, reason: "changed" })
          yield* call(() => fsp.unlink(target), mapError(input, "remove"))
        })
      )
      yield* attempt(() => dir.sync()).pipe(Effect.ignore)
    })
  )

/**
 * Removes the directory `real` if it is empty, through its parent's verified
 * descriptor (a parent swapped for a link meanwhile is refused, and `rmdir`
 * never removes a link or a directory that holds anything). `false` when it
 * is not empty or gone.
 */
export const removeEmptyDirectory = (jail: Jail, real: string): Effect.Effect<boolean, OpenError> =>
  withVerifiedDirectory(jail, real, path.dirname(real), (base) =>
    attempt(() => fsp.rmdir(path.join(base, path.basename(real)))).pipe(
      Effect.as(true),
      Effect.catch((e) =>
        e.code === "ENOTEMPTY" || e.code === "EEXIST" || e.code === "ENOENT" || e.code === "ENOTDIR"
          ? Effect.succeed(false)
          : Effect.fail(mapError(real, "remove the directory")(e.cause))
      )
    )
  )
