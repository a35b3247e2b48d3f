/**
 * The bridge from Node's `fs` to typed errors: every system call of the jail
 * goes through {@link call}, which maps the error codes a path can meet
 * (ENOENT, ELOOP, ENOTDIR, …) to the workspace's errors and everything else
 * to a `FileSystemError` that keeps the code. Nothing raw ("ENOENT") reaches
 * a caller.
 *
 * @internal
 */
import type { Stats } from "node:fs"
import { Effect } from "effect"
import { type FileKind, FileSystemError, InvalidPath, NotADirectory, NotFound } from "./errors.ts"

export const codeOf = (u: unknown): string =>
  typeof u === "object" && u !== null && "code" in u && typeof u.code === "string" ? u.code : "UNKNOWN"

const retryableCodes = new Set(["EMFILE", "ENFILE", "EBUSY", "EAGAIN", "EINTR", "EIO"])

/** The default mapping of a system error met on `path` while doing `operation`. */
export const mapError = (
  path: string,
  operation: string,
  expected: "file" | "directory" | "any" = "any"
): ((u: unknown) => InvalidPath | NotFound | NotADirectory | FileSystemError) => {
  return (u) => {
    const code = codeOf(u)
    switch (code) {
      case "ENOENT":
        return new NotFound({ path, expected })
      case "ELOOP":
        return new InvalidPath({ path, reason: "symlink-loop" })
      case "ENAMETOOLONG":
        return new InvalidPath({ path, reason: "too-long" })
      case "ENOTDIR":
        return expected === "directory" ? new NotADirectory({ path, kind: "file" }) : new NotFound({ path, expected })
      default:
        return new FileSystemError({ path, operation, code, retryable: retryableCodes.has(code) })
    }
  }
}

/** Runs one promise-returning system call; a rejection becomes the error `onError` builds. */
export const call = <A, E>(f: () => Promise<A>, onError: (u: unknown) => E): Effect.Effect<A, E> =>
  Effect.tryPromise({ try: f, catch: onError })

/** Runs a system call and keeps the raw code, for callers that branch on it (EEXIST, ENOENT…). */
export const attempt = <A>(f: () => Promise<A>): Effect.Effect<A, { readonly code: string; readonly cause: unknown }> =>
  Effect.tryPromise({ try: f, catch: (cause) => ({ code: codeOf(cause), cause }) })

/**
 * Runs one synchronous system call; a throw becomes the error `onError`
 * builds. The jail's lookups and bounded reads of local files use it: each is
 * a syscall of a few microseconds, where a thread-pool round trip costs ten
 * times that.
 */
export const callSync = <A, E>(f: () => A, onError: (u: unknown) => E): Effect.Effect<A, E> =>
  Effect.try({ try: f, catch: onError })

/** {@link callSync} keeping the raw code, like {@link attempt}. */
export const attemptSync = <A>(f: () => A): Effect.Effect<A, { readonly code: string; readonly cause: unknown }> =>
  Effect.try({ try: f, catch: (cause) => ({ code: codeOf(cause), cause }) })

export const kindOf = (st: Stats): FileKind =>
  st.isFile()
    ? "file"
    : st.isDirectory()
      ? "directory"
      : st.isSymbolicLink()
        ? "symlink"
        : st.isFIFO()
          ? "fifo"
          : st.isCharacterDevice()
            ? "character-device"
            : st.isBlockDevice()
              ? "block-device"
              : st.isSocket()
                ? "socket"
                : "unknown"
