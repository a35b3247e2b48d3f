/**
 * The file system isomorphic-git is given: Node's, read-only, jailed. A read
 * that follows links (`readFile`, `stat`, `readdir`) is refused as if
 * nothing were there (`ENOENT`) unless the opened descriptor's real path lies
 * inside the jail and it is a regular file or directory (never a FIFO);
 * `lstat` and `readlink` look at a link itself, through its directory opened
 * and checked the same way. As git does since 2.32, a `.gitignore`,
 * `.gitattributes` or `.mailmap` that is a symbolic link is not read at all.
 * Writes fail, unless the git writes ask for a writable client: then each
 * name is made or removed through its directory, opened and checked inside.
 *
 * The git directories are read the same way: the object store check found
 * every link in them leading inside, but the repository's directory itself
 * could be swapped for a link to another repository after that check.
 *
 * isomorphic-git reads from the repository's config only `core.filemode`
 * and `core.autocrlf` (it has no includes, hooks, filters or programs), and
 * the config file itself comes through here, so it must lie inside too.
 *
 * @internal
 */
import type * as nodeFs from "node:fs"
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFile,
  readlinkSync,
  realpathSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  writeFileSync
} from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"
import { isInside } from "../../internal/workspace/paths.ts"

const missing = (p: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`ENOENT: no such file or directory, '${p}'`), { code: "ENOENT", errno: -2, path: p })

const readOnly = (p: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`EROFS: read-only file system, '${p}'`), { code: "EROFS", errno: -30, path: p })

const noLinks = new Set([".gitignore", ".gitattributes", ".mailmap"])

/** Reads never block on a FIFO or device, and directories are opened as such. */
const fileFlags = constants.O_RDONLY | constants.O_NONBLOCK
const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK
const writeFlags =
  constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK

const procFd = existsSync("/proc/self/fd")

/** `fs.readFile` on a descriptor already opened and checked. */
const readFd = promisify(readFile)

/**
 * A client for isomorphic-git (`{ promises }`) that reads only inside `root`.
 * Every read opens first and checks the descriptor (threats 44 and 45): it
 * must be a regular file (or, for `stat` and `readdir`, a directory), so a
 * FIFO or device is as good as missing and never blocks a thread, and its
 * real path must lie inside the root, so a directory swapped for a link
 * between a check and the read (the repository itself included) cannot lead
 * outside. `lstat` and `readlink` look at the entry itself through its
 * directory, opened and checked the same way.
 */
export const jailedFs = (root: string, options?: { readonly writable?: boolean }) => {
  /** Whether an open descriptor (or, without `/proc/self/fd`, the path) lies inside the root. */
  const inside = (fd: number, p: string): boolean => {
    try {
      return isInside(root, procFd ? readlinkSync(`/proc/self/fd/${fd}`) : realpathSync(p))
    } catch {
      return false
    }
  }
  // The checks are synchronous: a few system calls that cannot block (`O_NONBLOCK`), where a trip through the
  // thread pool each cost more than twice the whole `lstat` of a status walk.
  /** Opens `p` and checks the descriptor; throws `ENOENT` for anything that fails a check. */
  const open = (p: string, want: "file" | "directory" | "any"): number => {
    if (noLinks.has(path.basename(p)) && lstatChecked(p).isSymbolicLink()) throw missing(p)
    let fd: number
    try {
      fd = openSync(p, want === "directory" ? dirFlags : fileFlags)
    } catch {
      throw missing(p)
    }
    try {
      const st = fstatSync(fd)
      const kindOk =
        want === "file" ? st.isFile() : want === "directory" ? st.isDirectory() : st.isFile() || st.isDirectory()
      if (!kindOk || !inside(fd, p)) throw missing(p)
      return fd
    } catch (e) {
      closeSync(fd)
      throw e
    }
  }
  /** Runs `f` on a name for the entry `p` itself, through its directory opened and checked. */
  const throughParent = <A>(p: string, f: (entry: string) => A): A => {
    const dir = open(path.dirname(p), "directory")
    try {
      return f(procFd ? `/proc/self/fd/${dir}/${path.basename(p)}` : p)
    } catch {
      throw missing(p)
    } finally {
      closeSync(dir)
    }
  }
  const lstatChecked = (p: string, options?: unknown): nodeFs.Stats =>
    throughParent(
      p,
      // With `throwIfNoEntry`, a stat or a throw; isomorphic-git asks for `bigint` stats itself when it wants them.
      (entry) => lstatSync(entry, { ...(options as nodeFs.StatSyncOptions), throwIfNoEntry: true }) as nodeFs.Stats
    )
  const promises = {
    readFile: async (p: string, options?: unknown) => {
      const fd = open(p, "file")
      try {
        // The bytes are read in the pool (a pack can be large); the descriptor is the one checked.
        return await readFd(fd, options as Parameters<typeof readFd>[1])
      } finally {
        closeSync(fd)
      }
    },
    stat: async (p: string, options?: unknown) => {
      const fd = open(p, "any")
      try {
        return fstatSync(fd, options as nodeFs.StatOptions)
      } finally {
        closeSync(fd)
      }
    },
    readdir: async (p: string, options?: unknown) => {
      const fd = open(p, "directory")
      try {
        // Listed through the descriptor that was checked, not by the name again.
        return readdirSync(procFd ? `/proc/self/fd/${fd}` : p, options as Parameters<typeof readdirSync>[1])
      } finally {
        closeSync(fd)
      }
    },
    lstat: async (p: string, options?: unknown) => lstatChecked(p, options),
    readlink: async (p: string, options?: unknown) =>
      throughParent(p, (entry) => readlinkSync(entry, options as Parameters<typeof readlinkSync>[1])),
    writeFile: async (p: string) => {
      throw readOnly(p)
    },
    unlink: async (p: string) => {
      throw readOnly(p)
    },
    mkdir: async (p: string) => {
      throw readOnly(p)
    },
    rmdir: async (p: string) => {
      throw readOnly(p)
    },
    symlink: async (_target: string, p: string) => {
      throw readOnly(p)
    },
    chmod: async (p: string) => {
      throw readOnly(p)
    }
  }
  if (options?.writable !== true) return { promises }
  /** Runs `f` on the entry's name through its directory, opened and checked inside; `f`'s own errors pass. */
  const inDir = <A>(p: string, f: (entry: string) => A): A => {
    const dir = open(path.dirname(p), "directory")
    try {
      return f(procFd ? `/proc/self/fd/${dir}/${path.basename(p)}` : p)
    } finally {
      closeSync(dir)
    }
  }
  // The git writes (the isomorphic backend): each name is created or removed in a directory checked inside,
  // and a file is opened without following a link, so nothing is written outside the root.
  const writable = {
    ...promises,
    writeFile: async (p: string, data: string | Uint8Array, o?: unknown) => {
      const mode = typeof o === "object" && o !== null && "mode" in o ? Number(o.mode) : 0o666
      inDir(p, (entry) => {
        const fd = openSync(entry, writeFlags, mode)
        try {
          // A FIFO or device in the repository is refused, not written to.
          if (!fstatSync(fd).isFile())
            throw Object.assign(new Error(`${entry} is not a regular file`), { code: "EPERM" })
          writeFileSync(fd, data)
        } finally {
          closeSync(fd)
        }
      })
    },
    unlink: async (p: string) => inDir(p, (entry) => unlinkSync(entry)),
    mkdir: async (p: string) => inDir(p, (entry) => mkdirSync(entry)),
    rmdir: async (p: string) => inDir(p, (entry) => rmdirSync(entry)),
    symlink: async (target: string, p: string) => inDir(p, (entry) => symlinkSync(target, entry)),
    chmod: async (p: string, mode: number) =>
      inDir(p, (entry) => {
        if (!lstatSync(entry).isSymbolicLink()) chmodSync(entry, mode)
      })
  }
  return { promises: writable }
}
