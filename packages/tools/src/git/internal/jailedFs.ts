/**
 * The file system isomorphic-git is given: Node's, read-only, jailed. A read
 * that follows links (`readFile`, `stat`, `readdir`) is refused as if
 * nothing were there (`ENOENT`) unless the opened descriptor's real path lies
 * inside the jail and it is a regular file or directory (never a FIFO);
 * `lstat` and `readlink` look at a link itself, through its directory opened
 * and checked the same way. As git does since 2.32, a `.gitignore`,
 * `.gitattributes` or `.mailmap` that is a symbolic link is not read at all.
 * Writes fail: the tools never write a repository.
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
import { constants, existsSync } from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { isInside } from "../../internal/workspace/paths.ts"

const missing = (p: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`ENOENT: no such file or directory, '${p}'`), { code: "ENOENT", errno: -2, path: p })

const readOnly = (p: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`EROFS: read-only file system, '${p}'`), { code: "EROFS", errno: -30, path: p })

const noLinks = new Set([".gitignore", ".gitattributes", ".mailmap"])

/** Reads never block on a FIFO or device, and directories are opened as such. */
const fileFlags = constants.O_RDONLY | constants.O_NONBLOCK
const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK

const procFd = existsSync("/proc/self/fd")

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
export const jailedFs = (root: string) => {
  /** Whether an open descriptor (or, without `/proc/self/fd`, the path) lies inside the root. */
  const inside = async (fd: number, p: string): Promise<boolean> => {
    const real = procFd
      ? await fsp.readlink(`/proc/self/fd/${fd}`).catch(() => undefined)
      : await fsp.realpath(p).catch(() => undefined)
    return real !== undefined && isInside(root, real)
  }
  /** Opens `p` and checks the descriptor; throws `ENOENT` for anything that fails a check. */
  const open = async (p: string, want: "file" | "directory" | "any") => {
    if (noLinks.has(path.basename(p))) {
      const st = await lstat(p)
      if (st.isSymbolicLink()) throw missing(p)
    }
    const handle = await fsp.open(p, want === "directory" ? dirFlags : fileFlags).catch(() => {
      throw missing(p)
    })
    try {
      const st = await handle.stat({ bigint: true })
      const kindOk =
        want === "file" ? st.isFile() : want === "directory" ? st.isDirectory() : st.isFile() || st.isDirectory()
      if (!kindOk || !(await inside(handle.fd, p))) throw missing(p)
      return handle
    } catch (e) {
      await handle.close()
      throw e
    }
  }
  /** Runs `f` on a name for the entry `p` itself, through its directory opened and checked. */
  const throughParent = async <A>(p: string, f: (entry: string) => Promise<A>): Promise<A> => {
    const dir = await open(path.dirname(p), "directory")
    try {
      return await f(procFd ? `/proc/self/fd/${dir.fd}/${path.basename(p)}` : p)
    } finally {
      await dir.close()
    }
  }
  const lstat = (p: string, options?: unknown) =>
    throughParent(p, (entry) => fsp.lstat(entry, options as nodeFs.StatOptions))
  const promises = {
    readFile: async (p: string, options?: unknown) => {
      const handle = await open(p, "file")
      try {
        return await handle.readFile(options as Parameters<typeof handle.readFile>[0])
      } finally {
        await handle.close()
      }
    },
    stat: async (p: string, options?: unknown) => {
      const handle = await open(p, "any")
      try {
        return await handle.stat(options as nodeFs.StatOptions)
      } finally {
        await handle.close()
      }
    },
    readdir: async (p: string, options?: unknown) => {
      const handle = await open(p, "directory")
      try {
        // Listed through the descriptor that was checked, not by the name again.
        return await fsp.readdir(
          procFd ? `/proc/self/fd/${handle.fd}` : p,
          options as Parameters<typeof fsp.readdir>[1]
        )
      } finally {
        await handle.close()
      }
    },
    lstat,
    readlink: (p: string, options?: unknown) =>
      throughParent(p, (entry) => fsp.readlink(entry, options as Parameters<typeof fsp.readlink>[1])),
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
  return { promises }
}
