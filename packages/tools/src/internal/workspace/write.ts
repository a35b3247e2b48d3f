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
import { AlreadyExists, ConcurrentChange, NotADirectory, NotAFile } from "./errors.ts"
import { entryKey, withEntryLock } from "./lock.ts"
import { fdPath, type OpenError, verifyDescriptor } from "./open.ts"
import type { Jail, ResolvedPath } from "./resolve.ts"
import { sweepOnce, tempName, writing } from "./sweep.ts"
import { attempt, call, codeOf, kindOf, mapError } from "./system.ts"

const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
const tempFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
const readFlags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW

export type WriteMode = { readonly mode: "create" } | { readonly mode: "replace"; readonly expectedHash: string }

export type WriteError = OpenError | AlreadyExists | ReadProof.ProofRejected

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
  { readonly base: string; readonly handle: fsp.FileHandle; readonly stats: Stats },
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
    for (const segment of missing) {
      const base = jail.procFd ? fdPath(handle.fd) : expected
      // A level that appeared meanwhile is fine: opening it with O_NOFOLLOW and verifying decides.
      yield* attempt(() => fsp.mkdir(path.join(base, segment))).pipe(
        Effect.catch((e) =>
          e.code === "EEXIST" ? Effect.void : Effect.fail(mapError(input, "create the directory of")(e.cause))
        )
      )
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
    return { base: jail.procFd ? fdPath(handle.fd) : expected, handle, stats }
  })

/** SHA-256 of what `name` holds now in the verified directory, read in chunks; `undefined` if it is gone. */
const currentHash = (input: string, at: string): Effect.Effect<string | undefined, OpenError> =>
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
        const chunk = Buffer.allocUnsafe(1 << 16)
        while (true) {
          const { bytesRead } = yield* call(() => handle.read(chunk, 0, chunk.length, null), mapError(input, "read"))
          if (bytesRead === 0) break
          hash.update(chunk.subarray(0, bytesRead))
        }
        return hash.digest("hex")
      }),
    (opened) => (opened._tag === "Some" ? Effect.promise(() => opened.value.close()) : Effect.void)
  )

/**
 * Writes `bytes` to a resolved path atomically. `create` fails with
 * `AlreadyExists` if the name exists; `replace` fails with `ProofRejected`
 * unless the file still hashes to `expectedHash` just before the rename.
 * Returns the real path written.
 */
export const writeAtomic = (
  jail: Jail,
  resolved: ResolvedPath,
  bytes: Uint8Array,
  mode: WriteMode
): Effect.Effect<string, WriteError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const input = resolved.input
      const name = path.basename(resolved.real)
      const { base, handle: dir, stats: dirStats } = yield* openParent(jail, input, resolved.real)
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
              const now = yield* currentHash(input, target)
              if (now === undefined) return yield* new ReadProof.ProofRejected({ path: input, reason: "deleted" })
              if (now !== mode.expectedHash) {
                return yield* new ReadProof.ProofRejected({ path: input, reason: "changed" })
              }
              yield* call(() => fsp.rename(temp, target), mapError(input, "replace"))
            })
      yield* withEntryLock(entryKey(dirStats, name), commit)
      yield* attempt(() => dir.sync()).pipe(Effect.ignore)
      return path.join(path.dirname(resolved.real), name)
    })
  )
