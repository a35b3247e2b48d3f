/**
 * The one directory walk of the workspace, shared by `search.grep` (its
 * TypeScript backend) and `file.glob`. Entries are visited depth first, each
 * directory's entries sorted by the bytes of their names (ripgrep's
 * `--sort path`). The workspace policy (blocked names, default ignores) is
 * applied first; then the caller's `keep` decides, given the verdict of the
 * ignore files (`.rgignore`, `.ignore`, `.gitignore`, whichever the caller
 * asks for, each read the way ripgrep's `ignore` crate reads them: the most
 * specific kind and the nearest directory win, `.gitignore` files above a
 * directory holding `.git` stop applying inside it). `search.grep` keeps
 * what ripgrep keeps (overrides, ignore files, file type, hidden-ness);
 * `file.glob` keeps what its pattern matches. Symbolic links are never
 * followed: they are skipped, or handed to the caller as links (never
 * opened here) when it asks for them.
 *
 * **Bound to the jail.** On Linux every directory is opened with
 * `O_DIRECTORY | O_NOFOLLOW` through its parent's descriptor
 * (`/proc/self/fd/<parent>/<name>`, the `openat` Node lacks), listed through
 * its own descriptor, and its files are opened and inspected through it
 * with `O_NOFOLLOW`; only the root (or the directory searched) is checked by
 * real path. A directory or file swapped for a link during the walk
 * therefore fails to open instead of leading outside, and a link in the
 * static part of a glob (`rootlink/etc/*`) is never walked through.
 * Elsewhere, paths are used and each file's descriptor is compared (device,
 * inode) with the path.
 *
 * The walk uses `node:fs` directly: directory entries with their types and
 * synchronous reads of page-cached files are what keeps the backend within
 * a small factor of ripgrep; Effect's `FileSystem` offers neither.
 *
 * @internal
 */
import {
  closeSync,
  type Dir,
  type Dirent,
  fstatSync,
  lstatSync,
  opendirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  type Stats
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
import { dirFlags, fileFlags, type OpenFile, tryOpen } from "../workspace/beneath.ts"

export type { OpenFile }

/** Which ignore files a walk reads. */
export interface IgnoreFiles {
  readonly rgignore: boolean
  readonly ignore: boolean
  readonly gitignore: boolean
}

/** An entry the caller decides on: path relative to the root, name, kind, and (lazily) the ignore files' verdict. */
export interface Candidate {
  readonly relative: string
  readonly name: string
  readonly isDir: boolean
  /** Directory levels below the base: 1 for the base's own entries. */
  readonly depth: number
  readonly ignored: () => Verdict
}

export interface WalkOptions {
  /** Canonical root of the workspace; every path is relative to it. */
  readonly root: string
  /** The directory to search, relative to the root (`.` for the root). */
  readonly base: string
  /** Whether the workspace policy refuses a relative path (blocked or default-ignored). */
  readonly excluded: (relative: string) => boolean
  /** Which ignore files to read (none when absent). */
  readonly ignoreFiles?: IgnoreFiles | undefined
  /** Also apply the ignore files of the directories from the root down to the base. */
  readonly parents?: boolean | undefined
  /** Whether to keep a file, or descend into a directory. */
  readonly keep: (candidate: Candidate) => boolean
  /** Symbolic links are handed out as `link` entries (kept by `keep` as files are) instead of skipped. */
  readonly links?: boolean | undefined
  /** Whether each directory's entries are visited in byte order of their names (default); off, in the order the system lists them. */
  readonly sorted?: boolean | undefined
  /** Whether `/proc/self/fd` can name open descriptors (Linux). */
  readonly procFd: boolean
  /**
   * Told of each ignore file (of the kinds read, or named in `watched`) met
   * that is not a regular file: a FIFO, socket, device or link there could
   * block another program that opens it by name (ripgrep, git); this walk
   * skips it.
   */
  readonly irregular?: ((relative: string) => void) | undefined
  /** The names `irregular` watches, instead of the ignore files read. */
  readonly watched?: ReadonlySet<string> | undefined
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

export interface Level {
  /** The directory, relative to the root (`""` for the root). */
  readonly dir: string
  readonly custom: ReadonlyArray<IgnoreRule>
  readonly ignore: ReadonlyArray<IgnoreRule>
  readonly git: ReadonlyArray<IgnoreRule>
  readonly hasGit: boolean
  readonly parent: Level | undefined
}

const compareNames = (a: Buffer, b: Buffer): number => Buffer.compare(a, b)

/** The largest ignore file read; ripgrep reads any size, but rules past a megabyte are not a real case. */
const maxIgnoreBytes = 1 << 20

/**
 * The rules of an ignore file, opened without blocking and read only if the
 * descriptor is a regular file (threat 45: a FIFO swapped in after the
 * listing would otherwise block the thread).
 */
const readRules = (path: string): ReadonlyArray<IgnoreRule> => {
  const fd = tryOpen(path, fileFlags)
  if (fd === undefined) return []
  try {
    const st = fstatSync(fd)
    if (!st.isFile() || st.size > maxIgnoreBytes) return []
    return parseIgnoreFile(readFileSync(fd, "utf8"))
  } catch {
    return []
  } finally {
    closeSync(fd)
  }
}

const none: ReadonlyArray<IgnoreRule> = []

/** What a name in a directory is, without following it: a regular file, something else, or nothing. */
const entryKind = (path: string): "file" | "other" | undefined => {
  try {
    return lstatSync(path).isFile() ? "file" : "other"
  } catch {
    return undefined
  }
}

/** The ignore file names of `kinds`. */
const ignoreNames = (kinds: IgnoreFiles | undefined): ReadonlyArray<string> =>
  kinds === undefined
    ? []
    : [
        ...(kinds.rgignore ? [".rgignore"] : []),
        ...(kinds.ignore ? [".ignore"] : []),
        ...(kinds.gitignore ? [".gitignore"] : [])
      ]

/**
 * A directory's level: its ignore files (each looked up by name, read only
 * if a regular file) and whether it holds `.git`; names `irregular` watches
 * that are not regular files are told.
 */
export const levelFor = (
  kinds: IgnoreFiles | undefined,
  realDir: string,
  dir: string,
  parent: Level | undefined,
  irregular?: (relative: string) => void,
  watched?: ReadonlySet<string>
): Level => {
  const found = new Map<string, "file" | "other" | undefined>()
  const kindOfName = (name: string) => {
    if (!found.has(name)) found.set(name, entryKind(`${realDir}/${name}`))
    return found.get(name)
  }
  if (irregular !== undefined) {
    for (const name of watched ?? ignoreNames(kinds)) {
      if (kindOfName(name) === "other") irregular(dir === "" ? name : `${dir}/${name}`)
    }
  }
  const rules = (name: string) => (kindOfName(name) === "file" ? readRules(`${realDir}/${name}`) : none)
  return {
    dir,
    custom: kinds?.rgignore === true ? rules(".rgignore") : none,
    ignore: kinds?.ignore === true ? rules(".ignore") : none,
    git: kinds?.gitignore === true ? rules(".gitignore") : none,
    hasGit: kinds !== undefined && kindOfName(".git") !== undefined,
    parent
  }
}

/** A directory's entries as the system lists them, read in small batches (for an unsorted walk). */
function* streamed(path: string): Generator<Dirent> {
  let dir: Dir
  try {
    dir = opendirSync(path, { bufferSize: 128 })
  } catch {
    return
  }
  try {
    for (;;) {
      const entry = dir.readSync()
      if (entry === null) return
      yield entry
    }
  } catch {
    // Unreadable from here on: the entries read so far stand.
  } finally {
    dir.closeSync()
  }
}

/** A directory's entries sorted by the bytes of their names (ripgrep's `--sort path`), or `undefined` if unreadable. */
const sortedEntries = (path: string): ReadonlyArray<Dirent> | undefined => {
  let entries: Array<Dirent>
  try {
    entries = readdirSync(path, { withFileTypes: true })
  } catch {
    return undefined
  }
  return entries
    .map((entry) => ({ entry, key: Buffer.from(entry.name, "utf8") }))
    .sort((a, b) => compareNames(a.key, b.key))
    .map((e) => e.entry)
}

/** The nearest verdict of each kind of ignore file, the more specific kind winning. */
export const ignoreVerdict = (level: Level, relative: string, isDir: boolean): Verdict => {
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

/**
 * What ripgrep keeps (the policy aside): override globs first, then the
 * ignore files, then the file type, then hidden-ness (a name starting with
 * `.`, unless something above selected it).
 */
export const ripgrepKeeps =
  (overrides: Overrides, types: TypeFilter | undefined) =>
  (c: Candidate): boolean => {
    const byOverride = matchOverrides(overrides, c.relative, c.isDir)
    if (byOverride !== undefined) return byOverride !== "ignore"
    let selected = false
    const byIgnore = c.ignored()
    if (byIgnore === "ignore") return false
    if (byIgnore === "whitelist") selected = true
    const byType = matchType(types, c.name, c.isDir)
    if (byType === "ignore") return false
    if (byType === "whitelist") selected = true
    return selected || !c.name.startsWith(".")
  }

/** The ignore files ripgrep reads. */
export const ripgrepIgnoreFiles: IgnoreFiles = { rgignore: true, ignore: true, gitignore: true }

export interface WalkedFile {
  /** Relative to the root, `/`-separated. */
  readonly relative: string
  /** A regular file, or (when asked for) a symbolic link, never followed here. */
  readonly kind: "file" | "link"
  /** Opens the file (never through a link); `undefined` if it is not a regular file any more. */
  readonly open: () => OpenFile | undefined
  /** The entry's own metadata (a link's, not its target's), read through its directory; `undefined` if gone. */
  readonly lstat: () => Stats | undefined
}

const lstatOrUndefined = (path: string): Stats | undefined => {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

/** Opens each directory from the root down to `baseDir` by name, never through a link; the levels of their ignore files. */
const descend = (
  options: WalkOptions,
  baseDir: string
): { readonly fds: ReadonlyArray<number>; readonly level: Level | undefined } | undefined => {
  const fds: Array<number> = []
  const rootFd = tryOpen(options.root, dirFlags)
  if (rootFd === undefined) return undefined
  fds.push(rootFd)
  try {
    if (readlinkSync(`/proc/self/fd/${rootFd}`) !== options.root) throw new Error("root moved")
    let level: Level | undefined
    let dir = ""
    for (const segment of baseDir === "" ? [] : baseDir.split("/")) {
      const here = `/proc/self/fd/${fds[fds.length - 1]}`
      level = levelFor(options.ignoreFiles, here, dir, level, options.irregular, options.watched)
      const fd = tryOpen(`${here}/${segment}`, dirFlags)
      if (fd === undefined) throw new Error("gone")
      fds.push(fd)
      dir = dir === "" ? segment : `${dir}/${segment}`
    }
    return { fds, level }
  } catch {
    for (const fd of fds) closeSync(fd)
    return undefined
  }
}

/** Handed out by a walk with `ticks`, every so many entries looked at: a chance for the consumer to yield. */
export interface Tick {
  readonly kind: "tick"
}

const tick: Tick = { kind: "tick" }

/** Entries looked at between two ticks. */
const tickEvery = 256

/**
 * The files (and, when asked, links) under `options.base` that `keep` keeps,
 * in ripgrep's `--sort path` order. With `ticks`, a {@link Tick} comes every
 * few hundred entries looked at, kept or not, so a consumer can let the event
 * loop run through a directory of 100,000 entries that holds no match.
 */
export function walk(options: WalkOptions & { readonly ticks: true }): Generator<WalkedFile | Tick>
export function walk(options: WalkOptions): Generator<WalkedFile>
export function* walk(options: WalkOptions & { readonly ticks?: boolean }): Generator<WalkedFile | Tick> {
  const { root, procFd } = options
  const baseDir = options.base === "." ? "" : options.base
  const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)
  /** `at` names the directory: a checked path, or a path through its parent's descriptor. */
  let looked = 0
  function* visit(dir: string, at: string, parent: Level | undefined, depth: number): Generator<WalkedFile | Tick> {
    // Entering a directory (an open, a listing, its ignore files) counts as several entries looked at.
    looked += 16
    if (options.ticks === true && looked % tickEvery < 16) yield tick
    let fd: number | undefined
    if (procFd) {
      fd = tryOpen(at, dirFlags)
      if (fd === undefined) return
    }
    try {
      const here = fd === undefined ? at : `/proc/self/fd/${fd}`
      // Unsorted, a directory is read as it is walked, so a huge one never sits whole in memory or holds the thread.
      const ordered = options.sorted === false ? streamed(here) : sortedEntries(here)
      if (ordered === undefined) return
      const level = levelFor(options.ignoreFiles, here, dir, parent, options.irregular, options.watched)
      for (const entry of ordered) {
        if (options.ticks === true && ++looked % tickEvery === 0) yield tick
        const isDir = entry.isDirectory()
        const isLink = options.links === true && entry.isSymbolicLink()
        if (!isDir && !isLink && !entry.isFile()) continue
        const relative = join(dir, entry.name)
        if (options.excluded(relative)) continue
        const candidate: Candidate = {
          relative,
          name: entry.name,
          isDir,
          depth: depth + 1,
          ignored: () => ignoreVerdict(level, relative, isDir)
        }
        if (!options.keep(candidate)) continue
        const path = `${here}/${entry.name}`
        if (isDir) yield* visit(relative, path, level, depth + 1)
        else if (isLink) yield { relative, kind: "link", open: () => undefined, lstat: () => lstatOrUndefined(path) }
        else if (fd !== undefined)
          yield {
            relative,
            kind: "file",
            open: () => asRegularFile(tryOpen(path, fileFlags)),
            lstat: () => lstatOrUndefined(path)
          }
        else
          yield {
            relative,
            kind: "file",
            open: () => openFile(`${root}/${relative}`, false),
            lstat: () => lstatOrUndefined(`${root}/${relative}`)
          }
      }
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }
  const base = baseDir === "" ? root : `${root}/${baseDir}`
  if (!procFd) {
    yield* visit(baseDir, base, undefined, 0)
    return
  }
  if (options.parents === true) {
    // Every directory from the root down is opened by name without following links: the base is reached
    // by the path the workspace resolved, and the ignore files above it are read on the way.
    const chain = descend(options, baseDir)
    if (chain === undefined) return
    try {
      yield* visit(baseDir, `/proc/self/fd/${chain.fds[chain.fds.length - 1]}/.`, chain.level, 0)
    } finally {
      for (const fd of chain.fds) closeSync(fd)
    }
    return
  }
  // The one real-path check: the directory searched is what the workspace resolved.
  const fd = tryOpen(base, dirFlags)
  if (fd === undefined) return
  try {
    if (readlinkSync(`/proc/self/fd/${fd}`) !== base) return
    yield* visit(baseDir, `/proc/self/fd/${fd}/.`, undefined, 0)
  } finally {
    closeSync(fd)
  }
}
