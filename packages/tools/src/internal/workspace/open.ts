/**
 * Opening bound to checking. A file is opened first, then the opened
 * descriptor itself is verified: on Linux its real path is read from
 * `/proc/self/fd/<fd>` and must be the path that was checked (inside the
 * root, not blocked); elsewhere its device and inode must match a fresh
 * `stat` of that path. Only regular files are read: the kind is checked with
 * `stat` before opening, the open uses `O_NONBLOCK | O_NOFOLLOW` (a FIFO
 * cannot block it, a link swapped in at the last segment makes it fail), and
 * `fstat` on the descriptor decides. Reads stop at the byte limit, so a file
 * that grows while read, or lies about its size, cannot exceed it. The calls
 * are synchronous: a regular local file of at most the byte limit, opened
 * non-blocking, costs a few microseconds per call (a file system that hangs,
 * such as a lost network mount, would stall the server; a thread-pool round
 * trip per call cost more than the work on every read).
 *
 * @internal
 */

import { isUtf8 } from "node:buffer"
import * as fs from "node:fs"
import { constants, type Stats } from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import {
  BinaryFile,
  BlockedPath,
  ConcurrentChange,
  type FileSystemError,
  FileTooLarge,
  type InvalidPath,
  type NotADirectory,
  NotAFile,
  type NotFound,
  NotFound as NotFoundError,
  OutsideWorkspace
} from "./errors.ts"
import { isInside, relativeTo } from "./paths.ts"
import type { Jail, ResolvedPath } from "./resolve.ts"
import { attemptSync, callSync, kindOf, mapError } from "./system.ts"

/** How many leading bytes decide whether a file is binary. */
export const sniffBytes = 8192

const readFlags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW
const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW

export type OpenError =
  | InvalidPath
  | NotFound
  | NotAFile
  | NotADirectory
  | OutsideWorkspace
  | BlockedPath
  | ConcurrentChange
  | FileSystemError

/** The path `/proc` gives an open descriptor. */
export const fdPath = (fd: number): string => `/proc/self/fd/${fd}`

/**
 * Checks that an open descriptor is the file `expected` names: same real
 * path (Linux) or same device and inode (elsewhere), inside the root and not
 * blocked.
 */
export const verifyDescriptor = (
  jail: Jail,
  fd: number,
  input: string,
  expected: string,
  st: Stats
): Effect.Effect<void, OutsideWorkspace | BlockedPath | ConcurrentChange | FileSystemError> =>
  Effect.gen(function* () {
    if (jail.procFd) {
      // An unreadable descriptor path is treated like a deleted file: a mismatch, refused below.
      const actual = yield* attemptSync(() => fs.readlinkSync(fdPath(fd))).pipe(
        Effect.orElseSucceed(() => `${expected} (deleted)`)
      )
      if (!isInside(jail.root, actual)) return yield* new OutsideWorkspace({ path: input, reason: "symlink-target" })
      const rule = jail.policy.blockedBy(relativeTo(jail.root, actual))
      if (rule !== undefined) return yield* new BlockedPath({ path: input, rule, via: "target" })
      if (actual !== expected) return yield* new ConcurrentChange({ path: input, retryable: true })
      return
    }
    const now = yield* attemptSync(() => fs.statSync(expected)).pipe(Effect.option)
    if (now._tag === "None" || now.value.dev !== st.dev || now.value.ino !== st.ino) {
      return yield* new ConcurrentChange({ path: input, retryable: true })
    }
  })

const openError = (input: string, expect: "file" | "directory") => (u: unknown) => {
  const code = typeof u === "object" && u !== null && "code" in u ? u.code : undefined
  // ELOOP under O_NOFOLLOW: the last segment became a link after it was checked.
  if (code === "ELOOP") return new ConcurrentChange({ path: input, retryable: true })
  // ENXIO: a socket, or a FIFO opened for writing with no reader.
  if (code === "ENXIO") return new NotAFile({ path: input, kind: "socket" })
  return mapError(input, "open", expect)(u)
}

/** Closes a descriptor the jail opened; closing cannot fail in a way a caller could act on. */
const closeFd = (fd: number) =>
  Effect.sync(() => {
    try {
      fs.closeSync(fd)
    } catch {
      // EBADF or EIO on close: the descriptor is released either way.
    }
  })

/**
 * Opens a checked regular file for reading and verifies the descriptor; the
 * descriptor is closed when the scope of `use` ends.
 */
export const withVerifiedFile = <A, E, R>(
  jail: Jail,
  resolved: ResolvedPath,
  use: (fd: number, st: Stats) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | OpenError, R> =>
  Effect.acquireUseRelease(
    callSync(() => fs.openSync(resolved.real, readFlags), openError(resolved.input, "file")),
    (fd) =>
      Effect.gen(function* () {
        const st = yield* callSync(() => fs.fstatSync(fd), mapError(resolved.input, "inspect", "file"))
        if (!st.isFile()) return yield* new NotAFile({ path: resolved.input, kind: kindOf(st) })
        yield* verifyDescriptor(jail, fd, resolved.input, resolved.real, st)
        return yield* use(fd, st)
      }),
    closeFd
  )

/**
 * Opens a checked directory (`O_DIRECTORY | O_NOFOLLOW`) and verifies the
 * descriptor; `use` receives a path that names that very directory
 * (`/proc/self/fd/<fd>` on Linux), so what it lists is what was checked.
 */
export const withVerifiedDirectory = <A, E, R>(
  jail: Jail,
  input: string,
  real: string,
  use: (base: string) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | OpenError, R> =>
  Effect.acquireUseRelease(
    callSync(() => fs.openSync(real, dirFlags), openError(input, "directory")),
    (fd) =>
      Effect.gen(function* () {
        const st = yield* callSync(() => fs.fstatSync(fd), mapError(input, "inspect", "directory"))
        yield* verifyDescriptor(jail, fd, input, real, st)
        return yield* use(jail.procFd ? fdPath(fd) : real)
      }),
    closeFd
  )

/** Why the first bytes of a file say it is binary, if they do. */
export const sniff = (head: Uint8Array): "nul-byte" | "invalid-utf8" | undefined => {
  if (head.includes(0)) return "nul-byte"
  if (isUtf8(head)) return undefined
  // The head may end inside a multi-byte character: drop up to three trailing bytes of it and try again.
  for (let cut = 1; cut <= 3 && cut < head.length; cut++) {
    if ((head[head.length - cut]! & 0xc0) !== 0x80) {
      return isUtf8(head.subarray(0, head.length - cut)) ? undefined : "invalid-utf8"
    }
  }
  return "invalid-utf8"
}

export interface FileBytes {
  readonly bytes: Uint8Array
  readonly stats: Stats
}

/**
 * Reads a verified file whole, never more than `maxBytes`: the stated size is
 * checked first, then the read stops one byte past the limit. With
 * `text: true`, the first 8 KB are checked for binary content before the rest
 * is read, and the whole is checked to be UTF-8.
 */
export const readVerified = (
  jail: Jail,
  resolved: ResolvedPath,
  options: { readonly maxBytes: number; readonly text: boolean }
): Effect.Effect<FileBytes, OpenError | BinaryFile | FileTooLarge> =>
  withVerifiedFile(jail, resolved, (fd, stats) =>
    Effect.gen(function* () {
      const { maxBytes } = options
      if (stats.size > maxBytes) {
        return yield* new FileTooLarge({ path: resolved.input, size: stats.size, limit: maxBytes })
      }
      // Reading `maxBytes + 1` bytes proves a file too large, whatever size it claimed.
      const cap = maxBytes + 1
      // Room for the stated size and one byte more (the end is seen without a second buffer), at least 4 KB (pooled); it grows if the file does.
      let buffer = Buffer.allocUnsafe(Math.min(Math.max(stats.size + 1, 4096), cap))
      let length = 0
      const readInto = (want: number) =>
        callSync(() => fs.readSync(fd, buffer, length, want, null), mapError(resolved.input, "read", "file"))
      if (options.text) {
        const window = Math.min(sniffBytes, buffer.length)
        while (length < window) {
          const bytesRead = yield* readInto(window - length)
          if (bytesRead === 0) break
          length += bytesRead
        }
        const reason = sniff(buffer.subarray(0, length))
        if (reason !== undefined) return yield* new BinaryFile({ path: resolved.input, size: stats.size, reason })
      }
      while (true) {
        if (length === buffer.length) {
          if (length >= cap) return yield* new FileTooLarge({ path: resolved.input, size: length, limit: maxBytes })
          const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, cap))
          buffer.copy(grown, 0, 0, length)
          buffer = grown
        }
        const bytesRead = yield* readInto(buffer.length - length)
        if (bytesRead === 0) break
        length += bytesRead
      }
      if (length > maxBytes) return yield* new FileTooLarge({ path: resolved.input, size: length, limit: maxBytes })
      const bytes = buffer.subarray(0, length)
      if (options.text && !isUtf8(bytes)) {
        return yield* new BinaryFile({ path: resolved.input, size: length, reason: "invalid-utf8" })
      }
      return { bytes, stats }
    })
  )

/**
 * Reads what a path resolved by `resolveEntry` names, as git would store it:
 * a regular file's bytes through a verified descriptor (never through a
 * link), or a symbolic link's own text (read through its directory's
 * verified descriptor, never followed).
 */
export const readEntryVerified = (
  jail: Jail,
  resolved: ResolvedPath,
  maxBytes: number
): Effect.Effect<Uint8Array, OpenError | FileTooLarge> => {
  if (resolved.kind === "missing") return Effect.fail(new NotFoundError({ path: resolved.input, expected: "file" }))
  if (resolved.kind === "symlink") {
    return withVerifiedDirectory(jail, resolved.input, path.dirname(resolved.real), (base) =>
      callSync(
        () => fs.readlinkSync(path.join(base, path.basename(resolved.real)), { encoding: "buffer" }),
        mapError(resolved.input, "read", "file")
      ).pipe(Effect.map((b) => new Uint8Array(b)))
    )
  }
  if (resolved.kind !== "file") return Effect.fail(new NotAFile({ path: resolved.input, kind: resolved.kind }))
  return readVerified(jail, resolved, { maxBytes, text: false }).pipe(
    Effect.map((r) => r.bytes),
    // Not reached: with `text: false` nothing is checked for being text.
    Effect.catchTag("BinaryFile", (e) => Effect.die(e))
  )
}
