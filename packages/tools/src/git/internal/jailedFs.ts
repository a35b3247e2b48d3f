/**
 * The file system isomorphic-git is given: Node's, read-only, jailed. A read
 * that follows links (`readFile`, `stat`, `readdir`) is refused as if
 * nothing were there (`ENOENT`) unless the real path lies inside the jail;
 * `lstat` and `readlink` look at a link itself and are left alone. As git
 * does since 2.32, a `.gitignore`, `.gitattributes` or `.mailmap` that is a
 * symbolic link is not read at all. Writes fail: the tools never write a
 * repository.
 *
 * The git directories are checked once per call by the object store check
 * (every link in them leads inside), so reads there go straight through.
 *
 * isomorphic-git reads from the repository's config only `core.filemode`
 * and `core.autocrlf` (it has no includes, hooks, filters or programs), and
 * the config file itself comes through here, so it must lie inside too.
 *
 * @internal
 */
import type * as nodeFs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { isInside } from "../../internal/workspace/paths.ts"

const missing = (p: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`ENOENT: no such file or directory, '${p}'`), { code: "ENOENT", errno: -2, path: p })

const readOnly = (p: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`EROFS: read-only file system, '${p}'`), { code: "EROFS", errno: -30, path: p })

const noLinks = new Set([".gitignore", ".gitattributes", ".mailmap"])

/**
 * A client for isomorphic-git (`{ promises }`) that reads only inside `root`.
 * Paths under `checked` (the git directories, whose every link the object
 * store check has just followed to inside the root) are read directly.
 */
export const jailedFs = (root: string, checked: ReadonlyArray<string> = []) => {
  const prefixes = checked.map((d) => (d.endsWith("/") ? d : `${d}/`))
  const inside = async (p: string): Promise<void> => {
    if (prefixes.some((d) => p.startsWith(d)) && !p.includes("/../")) return
    if (noLinks.has(path.basename(p))) {
      const st = await fsp.lstat(p)
      if (st.isSymbolicLink()) throw missing(p)
    }
    const real = await fsp.realpath(p).catch(() => {
      throw missing(p)
    })
    if (!isInside(root, real)) throw missing(p)
  }
  const promises = {
    readFile: async (p: string, options?: unknown) => {
      await inside(p)
      return fsp.readFile(p, options as Parameters<typeof fsp.readFile>[1])
    },
    stat: async (p: string, options?: unknown) => {
      await inside(p)
      return fsp.stat(p, options as nodeFs.StatOptions)
    },
    readdir: async (p: string, options?: unknown) => {
      await inside(p)
      return fsp.readdir(p, options as Parameters<typeof fsp.readdir>[1])
    },
    lstat: (p: string, options?: unknown) => fsp.lstat(p, options as nodeFs.StatOptions),
    readlink: (p: string, options?: unknown) => fsp.readlink(p, options as Parameters<typeof fsp.readlink>[1]),
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
