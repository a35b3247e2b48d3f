/**
 * The directory walk of the TypeScript backend, in ripgrep's order and with
 * ripgrep's filters, so both backends search the same files. Entries are
 * visited depth first, each directory's entries sorted by the bytes of
 * their names (ripgrep's `--sort path`). Each entry is decided the way
 * ripgrep's `ignore` crate decides it: override globs first, then the
 * nearest `.rgignore`, `.ignore` and `.gitignore` rule (in that order of
 * precedence; `.gitignore` files above a directory holding `.git` stop
 * applying inside it), then the file type, then hidden-ness (a name starting
 * with `.`, unless something above selected it). Symbolic links are neither
 * followed nor searched. The workspace policy (blocked names, default
 * ignores) is applied before all of that.
 *
 * **Bound to the jail.** On Linux every directory is opened with
 * `O_DIRECTORY | O_NOFOLLOW` through its parent's descriptor
 * (`/proc/self/fd/<parent>/<name>`, the `openat` Node lacks), listed through
 * its own descriptor, and its files are opened through it with
 * `O_NOFOLLOW`; only the directory searched is checked by real path. A
 * directory or file swapped for a link during the walk therefore fails to
 * open instead of leading outside. Elsewhere, paths are used and each file's
 * descriptor is compared (device, inode) with the path.
 *
 * The walk uses `node:fs` directly: directory entries with their types and
 * synchronous reads of page-cached files are what keeps the backend within
 * a small factor of ripgrep; Effect's `FileSystem` offers neither.
 *
 * @internal
 */
import {
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync
} from "node:fs"
import {
  type IgnoreRule,
  matchOverrides,
  matchRules,
  matchType,
  type Overrides,
  parseIgnoreFile,
  type TypeFilter,
  type Verdict
} from "./glob.ts"

export interface WalkOptions {
  /** Canonical root of the workspace; every path is relative to it. */
  readonly root: string
  /** The directory to search, relative to the root (`.` for the root). */
  readonly base: string
  /** Whether the workspace policy refuses a relative path (blocked or default-ignored). */
  readonly excluded: (relative: string) => boolean
  readonly overrides: Overrides
  readonly types: TypeFilter | undefined
  /** Whether `/proc/self/fd` can name open descriptors (Linux). */
  readonly procFd: boolean
}

const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
const fileFlags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW

/** An open regular file: its descriptor (the caller closes it) and size. */
export interface OpenFile {
  readonly fd: number
  readonly size: number
}

const tryOpen = (path: string, flags: number): number | undefined => {
  try {
    return openSync(path, flags)
  } catch {
    return undefined
  }
}

/** Keeps `fd` if it is a regular file (and `check` agrees), closes it otherwise. */
const asRegularFile = (fd: number | undefined, check?: (st: { dev: number; ino: number }) => boolean) => {
  if (fd === undefined) return undefined
  try {
    const st = fstatSync(fd)
    if (st.isFile() && (check === undefined || check(st))) return { fd, size: st.size }
  } catch {
    // Gone or unreadable: skipped, as ripgrep skips it.
  }
  closeSync(fd)
  return undefined
}

/** Opens the file at a checked real path without following a link, checking the descriptor names it. */
export const openFile = (real: string, procFd: boolean): OpenFile | undefined => {
  const fd = tryOpen(real, fileFlags)
  return asRegularFile(fd, (st) => {
    try {
      if (procFd) return readlinkSync(`/proc/self/fd/${fd}`) === real
      const now = lstatSync(real)
      return now.dev === st.dev && now.ino === st.ino
    } catch {
      return false
    }
  })
}

interface Level {
  /** The directory, relative to the root (`""` for the root). */
  readonly dir: string
  readonly custom: ReadonlyArray<IgnoreRule>
  readonly ignore: ReadonlyArray<IgnoreRule>
  readonly git: ReadonlyArray<IgnoreRule>
  readonly hasGit: boolean
  readonly parent: Level | undefined
}

const compareNames = (a: Buffer, b: Buffer): number => Buffer.compare(a, b)

const readRules = (path: string): ReadonlyArray<IgnoreRule> => {
  const fd = tryOpen(path, fileFlags)
  if (fd === undefined) return []
  try {
    return parseIgnoreFile(readFileSync(fd, "utf8"))
  } catch {
    return []
  } finally {
    closeSync(fd)
  }
}

const levelFor = (realDir: string, dir: string, entries: ReadonlyArray<Dirent>, parent: Level | undefined): Level => {
  const has = (name: string) => entries.some((e) => e.name === name && e.isFile())
  return {
    dir,
    custom: has(".rgignore") ? readRules(`${realDir}/.rgignore`) : [],
    ignore: has(".ignore") ? readRules(`${realDir}/.ignore`) : [],
    git: has(".gitignore") ? readRules(`${realDir}/.gitignore`) : [],
    hasGit: entries.some((e) => e.name === ".git"),
    parent
  }
}

/** The nearest verdict of each kind of ignore file, the more specific kind winning. */
const ignoreVerdict = (level: Level, relative: string, isDir: boolean): Verdict => {
  let custom: Verdict
  let ignore: Verdict
  let git: Verdict
  let sawGit = false
  for (let l: Level | undefined = level; l !== undefined; l = l.parent) {
    const path = l.dir === "" ? relative : relative.slice(l.dir.length + 1)
    if (custom === undefined && l.custom.length > 0) custom = matchRules(l.custom, path, isDir)
    if (ignore === undefined && l.ignore.length > 0) ignore = matchRules(l.ignore, path, isDir)
    if (!sawGit && git === undefined && l.git.length > 0) git = matchRules(l.git, path, isDir)
    sawGit = sawGit || l.hasGit
  }
  return custom ?? ignore ?? git
}

/** Whether ripgrep would skip an entry (the policy aside). */
const skipped = (options: WalkOptions, level: Level, relative: string, name: string, isDir: boolean): boolean => {
  const byOverride = matchOverrides(options.overrides, relative, isDir)
  if (byOverride !== undefined) return byOverride === "ignore"
  let selected = false
  const byIgnore = ignoreVerdict(level, relative, isDir)
  if (byIgnore === "ignore") return true
  if (byIgnore === "whitelist") selected = true
  const byType = matchType(options.types, name, isDir)
  if (byType === "ignore") return true
  if (byType === "whitelist") selected = true
  return !selected && name.startsWith(".")
}

export interface WalkedFile {
  /** Relative to the root, `/`-separated. */
  readonly relative: string
  /** Opens the file (never through a link); `undefined` if it is not a regular file any more. */
  readonly open: () => OpenFile | undefined
}

/** The files to search under `options.base`, in ripgrep's `--sort path` order. */
export function* walk(options: WalkOptions): Generator<WalkedFile> {
  const { root, procFd } = options
  const baseDir = options.base === "." ? "" : options.base
  const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)
  /** `at` names the directory: a checked path, or a path through its parent's descriptor. */
  function* visit(dir: string, at: string, parent: Level | undefined): Generator<WalkedFile> {
    let fd: number | undefined
    if (procFd) {
      fd = tryOpen(at, dirFlags)
      if (fd === undefined) return
    }
    try {
      const here = fd === undefined ? at : `/proc/self/fd/${fd}`
      let entries: Array<Dirent>
      try {
        entries = readdirSync(here, { withFileTypes: true })
      } catch {
        return
      }
      const level = levelFor(here, dir, entries, parent)
      const sorted = entries
        .map((entry) => ({ entry, key: Buffer.from(entry.name, "utf8") }))
        .sort((a, b) => compareNames(a.key, b.key))
      for (const { entry } of sorted) {
        const isDir = entry.isDirectory()
        if (!isDir && !entry.isFile()) continue
        const relative = join(dir, entry.name)
        if (options.excluded(relative)) continue
        if (skipped(options, level, relative, entry.name, isDir)) continue
        const path = `${here}/${entry.name}`
        if (isDir) yield* visit(relative, path, level)
        else if (fd !== undefined) yield { relative, open: () => asRegularFile(tryOpen(path, fileFlags)) }
        else yield { relative, open: () => openFile(`${root}/${relative}`, false) }
      }
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }
  const base = baseDir === "" ? root : `${root}/${baseDir}`
  if (procFd) {
    // The one real-path check: the directory searched is what the workspace resolved.
    const fd = tryOpen(base, dirFlags)
    if (fd === undefined) return
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== base) return
      yield* visit(baseDir, `/proc/self/fd/${fd}/.`, undefined)
    } finally {
      closeSync(fd)
    }
  } else {
    yield* visit(baseDir, base, undefined)
  }
}
