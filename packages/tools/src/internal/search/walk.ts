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
 * The walk uses `node:fs` directly: directory entries with their types and
 * synchronous reads of page-cached files are what keeps the backend within
 * a small factor of ripgrep; Effect's `FileSystem` offers neither.
 *
 * @internal
 */
import { type Dirent, lstatSync, readdirSync, readFileSync } from "node:fs"
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
  try {
    return parseIgnoreFile(readFileSync(path, "utf8"))
  } catch {
    return []
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
  /** Absolute path as walked (the root joined with `relative`). */
  readonly path: string
}

/** The files to search under `options.base`, in ripgrep's `--sort path` order. */
export function* walk(options: WalkOptions): Generator<WalkedFile> {
  const { root } = options
  const baseDir = options.base === "." ? "" : options.base
  const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)
  function* visit(dir: string, parent: Level | undefined): Generator<WalkedFile> {
    const realDir = dir === "" ? root : `${root}/${dir}`
    let entries: Array<Dirent>
    try {
      entries = readdirSync(realDir, { withFileTypes: true })
    } catch {
      return
    }
    const level = levelFor(realDir, dir, entries, parent)
    const sorted = entries
      .map((entry) => ({ entry, key: Buffer.from(entry.name, "utf8") }))
      .sort((a, b) => compareNames(a.key, b.key))
    for (const { entry } of sorted) {
      const isDir = entry.isDirectory()
      if (!isDir && !entry.isFile()) continue
      const relative = join(dir, entry.name)
      if (options.excluded(relative)) continue
      if (skipped(options, level, relative, entry.name, isDir)) continue
      if (isDir) yield* visit(relative, level)
      else yield { relative, path: `${root}/${relative}` }
    }
  }
  yield* visit(baseDir, undefined)
}

/** Whether a path names a directory without following a final link. */
export const isDirectory = (path: string): boolean => {
  try {
    return lstatSync(path).isDirectory()
  } catch {
    return false
  }
}
