/**
 * Reading a small file the tools open by a path they did not resolve through
 * the workspace (git's own files: `HEAD`, `commondir`, `config`,
 * `objects/info/alternates`, `packed-refs`, the index, refs) without ever
 * blocking (threat 45): it is opened with `O_NONBLOCK`, so a FIFO, a socket
 * or a device there cannot hold the thread, and read only when `fstat` on the
 * descriptor says it is a regular file within the size limit. With a root,
 * the opened descriptor's real path must lie inside it (Linux). The call is
 * synchronous: such files are small, and a trip through the thread pool
 * costs more than the read (and is what a blocking open used to pin).
 *
 * @internal
 */
import { closeSync, constants, existsSync, fstatSync, openSync, readlinkSync, readSync } from "node:fs"
import type { FileKind } from "./errors.ts"
import { isInside } from "./paths.ts"
import { kindOf } from "./system.ts"

/** What reading found: the bytes, nothing there, something other than a regular file, a file too large, or a file outside the root. */
export type Regular =
  | { readonly _tag: "Bytes"; readonly bytes: Buffer }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "NotAFile"; readonly kind: FileKind }
  | { readonly _tag: "TooLarge"; readonly size: number }
  | { readonly _tag: "Outside" }

const procFd = existsSync("/proc/self/fd")

export interface RegularOptions {
  readonly maxBytes: number
  /** The descriptor's real path must lie inside it. */
  readonly root?: string | undefined
  /** Whether a link as the last name is followed (the default) or refused (`NotAFile`, kind `symlink`). */
  readonly follow?: boolean | undefined
}

/** Reads `file` if it is a regular file of at most `maxBytes`, never blocking on what is there. */
export const readRegularSync = (file: string, options: RegularOptions): Regular => {
  let fd: number
  try {
    fd = openSync(
      file,
      constants.O_RDONLY | constants.O_NONBLOCK | (options.follow === false ? constants.O_NOFOLLOW : 0)
    )
  } catch (e) {
    const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined
    // ENXIO: a socket. ELOOP: a link not followed, or a loop.
    if (code === "ENXIO") return { _tag: "NotAFile", kind: "socket" }
    if (code === "ELOOP" && options.follow === false) return { _tag: "NotAFile", kind: "symlink" }
    return { _tag: "Missing" }
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) return { _tag: "NotAFile", kind: kindOf(st) }
    if (options.root !== undefined && procFd && !isInside(options.root, readlinkSync(`/proc/self/fd/${fd}`))) {
      return { _tag: "Outside" }
    }
    if (st.size > options.maxBytes) return { _tag: "TooLarge", size: st.size }
    // One byte more than the limit proves a file that grew too large.
    const buffer = Buffer.allocUnsafe(Math.min(st.size, options.maxBytes) + 1)
    let length = 0
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null)
      if (n === 0) break
      length += n
    }
    if (length > options.maxBytes) return { _tag: "TooLarge", size: length }
    return { _tag: "Bytes", bytes: buffer.subarray(0, length) }
  } catch {
    return { _tag: "Missing" }
  } finally {
    closeSync(fd)
  }
}

/** The bytes of {@link readRegularSync}, or `undefined` for anything else. */
export const regularBytes = (file: string, options: RegularOptions): Buffer | undefined => {
  const r = readRegularSync(file, options)
  return r._tag === "Bytes" ? r.bytes : undefined
}
