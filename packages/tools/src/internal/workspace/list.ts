/**
 * One level of a directory, read through its verified descriptor. Each entry
 * is inspected without following it (`lstat`); a symbolic link is resolved
 * only to say where it points (inside, outside, nowhere) and, when inside,
 * what its target is. Nothing outside the root is ever listed or stat'ed
 * beyond the link itself.
 *
 * @internal
 */
import * as fs from "node:fs"
import { Effect } from "effect"
import type { FileKind } from "./errors.ts"
import { type OpenError, withVerifiedDirectory } from "./open.ts"
import { isInside, relativeTo } from "./paths.ts"
import type { Jail, ResolvedPath } from "./resolve.ts"
import { callSync, kindOf, mapError } from "./system.ts"

export interface Entry {
  readonly name: string
  /** Path relative to the root, `/`-separated. */
  readonly relative: string
  /** The entry's kind; for a link inside the root, its target's kind; for other links, `symlink`. */
  readonly kind: FileKind
  readonly size: number
  readonly mtimeMs: number
  /** Present for symbolic links: where the link leads. */
  readonly link?: "inside" | "outside" | "broken" | undefined
  /** The blocked rule the entry (or its link target) matches, if any. */
  readonly blocked?: string | undefined
}

// One directory's entries are stat'ed synchronously: a few microseconds each, where a promise per entry
// costs ten times that; a single level is short enough not to hold the event loop.
const lstatOf = (at: string): fs.Stats | undefined => {
  try {
    return fs.lstatSync(at)
  } catch {
    return undefined
  }
}

// `name` is one segment from readdir (never `.`, `..` or containing `/`), so joining is concatenation.
const inspect = (jail: Jail, dirRelative: string, base: string, name: string): Entry | undefined => {
  const at = `${base}/${name}`
  const relative = dirRelative === "." ? name : `${dirRelative}/${name}`
  const own = lstatOf(at)
  // An entry removed since readdir is simply not there any more.
  if (own === undefined) return undefined
  const blocked = jail.policy.blockedBy(relative)
  if (!own.isSymbolicLink()) {
    return { name, relative, kind: kindOf(own), size: own.size, mtimeMs: own.mtimeMs, blocked }
  }
  let target: string
  try {
    target = fs.realpathSync(at)
  } catch {
    return { name, relative, kind: "symlink", size: own.size, mtimeMs: own.mtimeMs, link: "broken", blocked }
  }
  if (!isInside(jail.root, target)) {
    return { name, relative, kind: "symlink", size: own.size, mtimeMs: own.mtimeMs, link: "outside", blocked }
  }
  let of: fs.Stats | undefined
  try {
    of = fs.statSync(target)
  } catch {
    of = undefined
  }
  return {
    name,
    relative,
    kind: of !== undefined ? kindOf(of) : "symlink",
    size: (of ?? own).size,
    mtimeMs: (of ?? own).mtimeMs,
    link: "inside",
    blocked: blocked ?? jail.policy.blockedBy(relativeTo(jail.root, target))
  }
}

export const listDirectory = (jail: Jail, dir: ResolvedPath): Effect.Effect<ReadonlyArray<Entry>, OpenError> =>
  withVerifiedDirectory(jail, dir.input, dir.real, (base) =>
    Effect.map(
      callSync(() => fs.readdirSync(base), mapError(dir.input, "list", "directory")),
      (names) => {
        const entries: Array<Entry> = []
        const dirRelative = relativeTo(jail.root, dir.real)
        for (const name of names) {
          const entry = inspect(jail, dirRelative, base, name)
          if (entry !== undefined) entries.push(entry)
        }
        return entries
      }
    )
  )
