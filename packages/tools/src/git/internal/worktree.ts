/**
 * What git would open by name in the working tree and wait on (threat 45):
 * it reads `.gitignore` in every directory it lists, `.gitattributes` along
 * the paths it diffs and `.mailmap` at the top, each with a blocking `open`,
 * so a FIFO (or socket, or device) planted under one of those names holds
 * the git process until the call times out. Before git runs, each directory
 * git would enter is looked at: none of those names may be a FIFO, socket or
 * device (git opens them without following a link, so a link is harmless).
 * Directories excluded by `.gitignore` (read without blocking) and `.git`
 * are left out, as git leaves them out. A directory whose entries and rules
 * have not changed since it was last looked at (the same `lstat` of it, of
 * its `.gitignore` and of those above) is not listed again, so the check of
 * an unchanged tree costs a few `lstat`s per directory. When a name fails,
 * the native backend hands the call to the isomorphic one, which reads through
 * a jailed file system that skips anything but regular files.
 *
 * @internal
 */
import { type BigIntStats, type Dirent, lstatSync, readdirSync } from "node:fs"
import { ignoreVerdict, type Level, levelFor } from "../../internal/search/walk.ts"

/** The names git opens by itself in every directory it enters (`.mailmap` only at the top). */
const watched: ReadonlySet<string> = new Set([".gitignore", ".gitattributes"])

const lstatOf = (path: string): BigIntStats | undefined => {
  try {
    return lstatSync(path, { bigint: true })
  } catch {
    return undefined
  }
}

const signatureOf = (st: BigIntStats | undefined): string =>
  st === undefined ? "-" : `${st.dev}:${st.ino}:${st.mode}:${st.mtimeNs}:${st.ctimeNs}`

/** What git would wait on when it opens it: a FIFO, socket or device (a link it does not follow). */
const blocking = (e: {
  isFIFO(): boolean
  isSocket(): boolean
  isCharacterDevice(): boolean
  isBlockDevice(): boolean
}) => e.isFIFO() || e.isSocket() || e.isCharacterDevice() || e.isBlockDevice()

/**
 * A directory found clean, by its signature then (its own `lstat`, its
 * `.gitignore`'s and those above): no entry can change kind without changing
 * the directory, so an unchanged one is still clean. With the sub-directories
 * git enters.
 */
const seen = new Map<string, { readonly signature: string; readonly subdirs: ReadonlyArray<string> }>()

const gitignoreOnly = { gitignore: true, ignore: false, rgignore: false } as const

/** The first name under `workTree` (relative to it) that git would open by itself and wait on. */
export const irregularFile = (workTree: string): string | undefined => {
  const mailmap = lstatOf(`${workTree}/.mailmap`)
  if (mailmap !== undefined && blocking(mailmap)) return ".mailmap"
  const visit = (dir: string, parent: () => Level | undefined, above: string): string | undefined => {
    const abs = dir === "" ? workTree : `${workTree}/${dir}`
    const rules = `${above}/${signatureOf(lstatOf(`${abs}/.gitignore`))}`
    const signature = `${signatureOf(lstatOf(abs))}|${rules}`
    let level: Level | undefined
    const levelHere = () => {
      level ??= levelFor(gitignoreOnly, abs, dir, parent())
      return level
    }
    const key = `${workTree}\0${dir}`
    const hit = seen.get(key)
    let subdirs = hit?.signature === signature ? hit.subdirs : undefined
    if (subdirs === undefined) {
      let entries: ReadonlyArray<Dirent>
      try {
        entries = readdirSync(abs, { withFileTypes: true })
      } catch {
        entries = []
      }
      const found: Array<string> = []
      for (const e of entries) {
        if (watched.has(e.name)) {
          // A file system that does not give types in its listing is asked by name.
          const unknown = !e.isFile() && !e.isDirectory() && !e.isSymbolicLink() && !blocking(e)
          const st = unknown ? lstatOf(`${abs}/${e.name}`) : e
          if (st !== undefined && blocking(st)) return dir === "" ? e.name : `${dir}/${e.name}`
        }
        if (!e.isDirectory() || e.name === ".git") continue
        if (ignoreVerdict(levelHere(), dir === "" ? e.name : `${dir}/${e.name}`, true) !== "ignore") found.push(e.name)
      }
      subdirs = found
      if (seen.size > 100_000) seen.clear()
      seen.set(key, { signature, subdirs })
    }
    for (const name of subdirs) {
      const problem = visit(dir === "" ? name : `${dir}/${name}`, levelHere, rules)
      if (problem !== undefined) return problem
    }
    return undefined
  }
  return visit("", () => undefined, "")
}
