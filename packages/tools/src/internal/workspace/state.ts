/**
 * The state folder `<root>/.ugent` opened through the jail. The folder must
 * be a real directory (not a link), owned by the current user and not
 * writable by others; it is opened with `O_DIRECTORY | O_NOFOLLOW` and its
 * descriptor verified, and every file in it is named through that
 * descriptor, so nothing planted in the workspace can turn a write of ugent's
 * own state into a write elsewhere. The proof key must be a regular file
 * (never a link), owned by the current user, readable by no one else; it is
 * made with `O_EXCL` and mode 0600 (written aside, then linked into place, so
 * a concurrent process sees no key or a whole one).
 *
 * @internal
 */
import { randomBytes } from "node:crypto"
import { constants, existsSync, type Stats } from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import { FileSystemError, StateRefused } from "./errors.ts"
import { fdPath } from "./open.ts"
import { attempt, call, codeOf } from "./system.ts"

const procFd = existsSync("/proc/self/fd")

const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
const readFlags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW
const createFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

export type StateError = StateRefused | FileSystemError

const failure = (at: string, operation: string) => (u: unknown) =>
  new FileSystemError({ path: at, operation, code: codeOf(u), retryable: false })

const uid = (): number | undefined => (typeof process.getuid === "function" ? process.getuid() : undefined)

/** Refuses a directory of the state that others could change. */
const checkOwnDirectory = (at: string, st: Stats): Effect.Effect<void, StateRefused> => {
  const me = uid()
  if (me !== undefined && st.uid !== me) return Effect.fail(new StateRefused({ path: at, reason: "not-owned" }))
  if ((st.mode & 0o002) !== 0) return Effect.fail(new StateRefused({ path: at, reason: "writable-by-others" }))
  return Effect.void
}

/**
 * Opens (creating if missing) a directory `name` inside the directory that
 * `base` names, never through a link, and runs `use` with a path naming the
 * opened directory itself.
 */
export const withDirectory = <A, E>(
  base: string,
  shown: string,
  expected: string,
  use: (at: string) => Effect.Effect<A, E>
): Effect.Effect<A, E | StateError> =>
  Effect.gen(function* () {
    yield* attempt(() => fsp.mkdir(base, { mode: 0o700 })).pipe(
      Effect.catch((e) => (e.code === "EEXIST" ? Effect.void : Effect.fail(failure(shown, "create")(e.cause))))
    )
    return yield* Effect.acquireUseRelease(
      attempt(() => fsp.open(base, dirFlags)).pipe(
        Effect.catch((e): Effect.Effect<never, StateError> => {
          if (e.code !== "ELOOP" && e.code !== "ENOTDIR") return Effect.fail(failure(shown, "open")(e.cause))
          // O_DIRECTORY | O_NOFOLLOW on a link fails with ENOTDIR or ELOOP: tell a link from a file.
          return Effect.flatMap(Effect.option(attempt(() => fsp.lstat(base))), (st) =>
            Effect.fail(
              new StateRefused({
                path: shown,
                reason: st._tag === "Some" && !st.value.isSymbolicLink() ? "not-a-directory" : "link"
              })
            )
          )
        })
      ),
      (handle) =>
        Effect.gen(function* () {
          const st = yield* call(() => handle.stat(), failure(shown, "inspect"))
          if (!st.isDirectory()) return yield* new StateRefused({ path: shown, reason: "not-a-directory" })
          if (procFd) {
            const actual = yield* call(() => fsp.readlink(fdPath(handle.fd)), failure(shown, "inspect"))
            if (actual !== expected) return yield* new StateRefused({ path: shown, reason: "link" })
          } else {
            const now = yield* call(() => fsp.lstat(expected), failure(shown, "inspect"))
            if (now.isSymbolicLink() || now.ino !== st.ino || now.dev !== st.dev) {
              return yield* new StateRefused({ path: shown, reason: "link" })
            }
          }
          yield* checkOwnDirectory(shown, st)
          return yield* use(procFd ? fdPath(handle.fd) : expected)
        }),
      (handle) => Effect.promise(() => handle.close())
    )
  })

/** Creates `name` in the directory `dir` names, exclusively, with `bytes` and `mode`; `false` if it exists. */
export const createExclusive = (
  dir: string,
  name: string,
  shown: string,
  bytes: Uint8Array,
  mode: number
): Effect.Effect<boolean, StateError> => {
  const aside = path.join(dir, `.${name}.${randomBytes(6).toString("hex")}.ugent-tmp`)
  return Effect.gen(function* () {
    yield* Effect.acquireUseRelease(
      call(() => fsp.open(aside, createFlags, mode), failure(shown, "create")),
      (handle) =>
        Effect.gen(function* () {
          yield* call(() => handle.writeFile(bytes), failure(shown, "write"))
          yield* call(() => handle.chmod(mode), failure(shown, "write"))
          yield* call(() => handle.sync(), failure(shown, "write"))
        }),
      (handle) => Effect.promise(() => handle.close())
    )
    // `link` fails if the name exists: whoever links first wins, and a reader never sees a partial file.
    const linked = yield* Effect.result(attempt(() => fsp.link(aside, path.join(dir, name))))
    if (linked._tag === "Success") return true
    if (linked.failure.code === "EEXIST") return false
    return yield* failure(shown, "create")(linked.failure.cause)
  }).pipe(Effect.ensuring(Effect.promise(() => fsp.unlink(aside).catch(() => undefined))))
}

/** Reads a small owner-only regular file in the directory `dir` names, never through a link. */
export const readPrivate = (
  dir: string,
  name: string,
  shown: string,
  maxBytes: number
): Effect.Effect<Uint8Array | undefined, StateError> =>
  Effect.acquireUseRelease(
    attempt(() => fsp.open(path.join(dir, name), readFlags)).pipe(
      Effect.map((handle): fsp.FileHandle | undefined => handle),
      Effect.catch((e): Effect.Effect<fsp.FileHandle | undefined, StateError> => {
        if (e.code === "ENOENT") return Effect.succeed(undefined)
        if (e.code === "ELOOP") return Effect.fail(new StateRefused({ path: shown, reason: "link" }))
        if (e.code === "ENXIO") return Effect.fail(new StateRefused({ path: shown, reason: "not-a-file" }))
        return Effect.fail(failure(shown, "open")(e.cause))
      })
    ),
    (handle) =>
      Effect.gen(function* () {
        if (handle === undefined) return undefined
        const st = yield* call(() => handle.stat(), failure(shown, "inspect"))
        if (!st.isFile()) return yield* new StateRefused({ path: shown, reason: "not-a-file" })
        const me = uid()
        if (me !== undefined && st.uid !== me) return yield* new StateRefused({ path: shown, reason: "not-owned" })
        if ((st.mode & 0o077) !== 0) return yield* new StateRefused({ path: shown, reason: "readable-by-others" })
        if (st.size > maxBytes) return yield* new StateRefused({ path: shown, reason: "malformed" })
        const buffer = Buffer.alloc(maxBytes + 1)
        const { bytesRead } = yield* call(() => handle.read(buffer, 0, buffer.length, 0), failure(shown, "read"))
        if (bytesRead > maxBytes) return yield* new StateRefused({ path: shown, reason: "malformed" })
        return new Uint8Array(buffer.subarray(0, bytesRead))
      }),
    (handle) => (handle === undefined ? Effect.void : Effect.promise(() => handle.close()))
  )

/** Refuses a name in the directory `dir` names that is a link or not a regular file; a missing name is fine. */
export const checkRegularOrMissing = (dir: string, name: string, shown: string): Effect.Effect<void, StateError> =>
  attempt(() => fsp.lstat(path.join(dir, name))).pipe(
    Effect.matchEffect({
      onFailure: (e) => (e.code === "ENOENT" ? Effect.void : Effect.fail(failure(shown, "inspect")(e.cause))),
      onSuccess: (st) => {
        if (st.isSymbolicLink()) return Effect.fail(new StateRefused({ path: shown, reason: "link" }))
        if (!st.isFile()) return Effect.fail(new StateRefused({ path: shown, reason: "not-a-file" }))
        const me = uid()
        if (me !== undefined && st.uid !== me)
          return Effect.fail(new StateRefused({ path: shown, reason: "not-owned" }))
        return Effect.void
      }
    })
  )
