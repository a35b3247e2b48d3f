/**
 * Reaching entries below the workspace root by their relative paths without
 * ever following a link, for results another program (ripgrep, git) named:
 * its names are only candidates, and what the tools show of them is read
 * here. On Linux each directory from the root down is opened through its
 * parent's descriptor (`/proc/self/fd/<fd>/<name>`, the `openat` Node lacks)
 * with `O_DIRECTORY | O_NOFOLLOW`, and the last name is opened with
 * `O_NOFOLLOW | O_NONBLOCK` (or read as a link, never through it), so a path
 * with a link anywhere on it (one swapped in a moment ago included) is not
 * reached instead of leading out of the root, and a FIFO cannot block.
 * Paths asked for in path order share the directories already open.
 * Elsewhere the path is used and must have no link on it and still name what
 * was opened.
 *
 * @internal
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, realpathSync, type Stats } from "node:fs"

/** A directory, never through a link. */
export const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
/** A file, never through a link, and never waiting on a FIFO. */
export const fileFlags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW

/** An open regular file: its descriptor (the caller closes it) and size. */
export interface OpenFile {
  readonly fd: number
  readonly size: number
}

/** A descriptor of `path`, or `undefined` when it cannot be opened so. */
export const tryOpen = (path: string, flags: number): number | undefined => {
  try {
    return openSync(path, flags)
  } catch {
    return undefined
  }
}

export class Beneath {
  private readonly root: string
  private readonly procFd: boolean
  /** Open directories: the root first, then one per name in `names`. */
  private readonly fds: Array<number> = []
  private readonly names: Array<string> = []
  constructor(root: string, procFd: boolean) {
    this.root = root
    this.procFd = procFd
  }

  /** The regular file at `relative`, or `undefined` if it is anything else, gone, or reached through a link. */
  open(relative: string): OpenFile | undefined {
    const at = this.locate(relative)
    if (at === undefined) return undefined
    const fd = tryOpen(at, fileFlags)
    if (fd === undefined) return undefined
    try {
      const st = fstatSync(fd)
      if (st.isFile() && (this.procFd || this.samePath(at, st))) return { fd, size: st.size }
    } catch {
      // Gone or unreadable: not reached.
    }
    closeSync(fd)
    return undefined
  }

  /** The entry at `relative` itself (a link's own metadata), or `undefined` if it is not there below the root. */
  lstat(relative: string): Stats | undefined {
    const at = this.locate(relative)
    if (at === undefined) return undefined
    try {
      return lstatSync(at)
    } catch {
      return undefined
    }
  }

  /** The text of the symbolic link at `relative`, or `undefined` if there is none there below the root. */
  readlink(relative: string): Buffer | undefined {
    const at = this.locate(relative)
    if (at === undefined) return undefined
    try {
      return readlinkSync(at, { encoding: "buffer" })
    } catch {
      return undefined
    }
  }

  close(): void {
    for (const fd of this.fds) closeSync(fd)
    this.fds.length = 0
    this.names.length = 0
  }

  /** A path naming `relative` through its directory's descriptor, that directory reached without links. */
  private locate(relative: string): string | undefined {
    const segments = relative.split("/")
    if (segments.some((s) => s === "" || s === "." || s === "..")) return undefined
    if (!this.procFd) {
      const path = `${this.root}/${relative}`
      try {
        // No link on the way: the real path of the directory is the path itself.
        const dir = path.slice(0, path.lastIndexOf("/"))
        return realpathSync.native(dir) === dir ? path : undefined
      } catch {
        return undefined
      }
    }
    const name = segments.pop()!
    if (!this.enter(segments)) return undefined
    return `/proc/self/fd/${this.fds[this.fds.length - 1]}/${name}`
  }

  /** Opens the directories `dirs` below the root, keeping the ones already open that lead there. */
  private enter(dirs: ReadonlyArray<string>): boolean {
    if (this.fds.length === 0) {
      const rootFd = tryOpen(this.root, dirFlags)
      if (rootFd === undefined) return false
      this.fds.push(rootFd)
      let here: string | undefined
      try {
        here = readlinkSync(`/proc/self/fd/${rootFd}`)
      } catch {
        here = undefined
      }
      if (here !== this.root) {
        this.close()
        return false
      }
    }
    let shared = 0
    while (shared < dirs.length && shared < this.names.length && dirs[shared] === this.names[shared]) shared++
    while (this.names.length > shared) {
      closeSync(this.fds.pop()!)
      this.names.pop()
    }
    for (let i = shared; i < dirs.length; i++) {
      const fd = tryOpen(`/proc/self/fd/${this.fds[this.fds.length - 1]}/${dirs[i]}`, dirFlags)
      if (fd === undefined) return false
      this.fds.push(fd)
      this.names.push(dirs[i]!)
    }
    return true
  }

  /** Without `/proc/self/fd`: the path still names the opened file. */
  private samePath(path: string, st: Stats): boolean {
    try {
      const now = lstatSync(path)
      return now.dev === st.dev && now.ino === st.ino
    } catch {
      return false
    }
  }
}
