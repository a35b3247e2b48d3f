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

/** Entries handled between two yields to the event loop: a directory of 100,000 entries never holds it for long. */
const batch = 256

// Entries are stat'ed synchronously: a few microseconds each, where a promise per entry costs ten times that;
// a batch of them is short enough not to hold the event loop.
const lstatOf = (at: string): fs.Stats | undefined => {
  try {
    return fs.lstatSync(at)
  } catch {
    return undefined
  }
}

/**
 * An entry as the listing names it, before it is inspected: its kind from the
 * listing itself (a link's from its target, resolved to say where it leads).
 */
export interface Named {
  readonly name: string
  readonly relative: string
  readonly kind: FileKind
  readonly link?: "inside" | "outside" | "broken" | undefined
  readonly blocked?: string | undefined
  /** For a link: its own metadata and, when it leads inside, its target's. */
  readonly linkStats?: { readonly own: fs.Stats; readonly target: fs.Stats | undefined } | undefined
}

const direntKind = (d: fs.Dirent): FileKind | undefined =>
  d.isFile()
    ? "file"
    : d.isDirectory()
      ? "directory"
      : d.isSymbolicLink()
        ? "symlink"
        : d.isFIFO()
          ? "fifo"
          : d.isSocket()
            ? "socket"
            : d.isCharacterDevice()
              ? "character-device"
              : d.isBlockDevice()
                ? "block-device"
                : undefined

// `name` is one segment from readdir (never `.`, `..` or containing `/`), so joining is concatenation.
const nameOf = (jail: Jail, dirRelative: string, base: string, dirent: fs.Dirent): Named | undefined => {
  const name = dirent.name
  const at = `${base}/${name}`
  const relative = dirRelative === "." ? name : `${dirRelative}/${name}`
  const blocked = jail.policy.blockedBy(relative)
  let kind = direntKind(dirent)
  if (kind === undefined) {
    // The file system did not say (no d_type): ask.
    const own = lstatOf(at)
    if (own === undefined) return undefined
    kind = kindOf(own)
  }
  if (kind !== "symlink") return { name, relative, kind, blocked }
  const own = lstatOf(at)
  // An entry removed since readdir is simply not there any more.
  if (own === undefined) return undefined
  let target: string
  try {
    target = fs.realpathSync(at)
  } catch {
    return { name, relative, kind, blocked, link: "broken", linkStats: { own, target: undefined } }
  }
  if (!isInside(jail.root, target)) {
    return { name, relative, kind, blocked, link: "outside", linkStats: { own, target: undefined } }
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
    link: "inside",
    blocked: blocked ?? jail.policy.blockedBy(relativeTo(jail.root, target)),
    linkStats: { own, target: of }
  }
}

/** The entry a name stands for, with its size and time (a link's target's when it leads inside). */
const inspect = (base: string, named: Named): Entry | undefined => {
  const { name, relative, blocked } = named
  if (named.linkStats !== undefined) {
    const st = named.linkStats.target ?? named.linkStats.own
    return { name, relative, kind: named.kind, size: st.size, mtimeMs: st.mtimeMs, link: named.link, blocked }
  }
  const own = lstatOf(`${base}/${name}`)
  if (own === undefined) return undefined
  return { name, relative, kind: kindOf(own), size: own.size, mtimeMs: own.mtimeMs, blocked }
}

/** Merges a sorted batch into the sorted best `limit` so far. */
const mergeBest = <A>(
  best: ReadonlyArray<A>,
  sorted: ReadonlyArray<A>,
  order: (a: A, b: A) => number,
  limit: number
): Array<A> => {
  const out: Array<A> = []
  let i = 0
  let j = 0
  while (out.length < limit && (i < best.length || j < sorted.length)) {
    if (j >= sorted.length || (i < best.length && order(best[i]!, sorted[j]!) <= 0)) out.push(best[i++]!)
    else out.push(sorted[j++]!)
  }
  return out
}

/**
 * One page of a directory level, through its verified descriptor: the names
 * are read with their kinds (no `stat` but for links), filtered by `keep`,
 * the first `limit` in `order` are kept as they come (each batch sorted and
 * merged into the best so far), and only those are inspected. `total` counts every name kept. Between batches
 * the event loop runs, so a huge directory holds it for a batch at most.
 */
export const listPage = (
  jail: Jail,
  dir: ResolvedPath,
  options: {
    readonly keep: (named: Named) => boolean
    /** Without an order, every entry kept, in the order the system lists them. */
    readonly order?: ((a: Named, b: Named) => number) | undefined
    readonly limit?: number | undefined
  }
): Effect.Effect<{ readonly entries: ReadonlyArray<Entry>; readonly total: number }, OpenError> =>
  withVerifiedDirectory(jail, dir.input, dir.real, (base) =>
    Effect.scoped(
      Effect.gen(function* () {
        // Read in batches (`readdir` of 100,000 names in one call held the thread for a quarter of a second).
        const handle = yield* Effect.acquireRelease(
          callSync(() => fs.opendirSync(base, { bufferSize: 128 }), mapError(dir.input, "list", "directory")),
          (d) =>
            Effect.sync(() => {
              try {
                d.closeSync()
              } catch {
                // Already closed: nothing to release.
              }
            })
        )
        const dirRelative = relativeTo(jail.root, dir.real)
        let best: Array<Named> = []
        let total = 0
        for (let done = false, first = true; !done; first = false) {
          if (!first) yield* Effect.yieldNow
          const kept: Array<Named> = []
          for (let i = 0; i < batch; i++) {
            const dirent = yield* callSync(() => handle.readSync(), mapError(dir.input, "list", "directory"))
            if (dirent === null) {
              done = true
              break
            }
            const named = nameOf(jail, dirRelative, base, dirent)
            if (named !== undefined && options.keep(named)) kept.push(named)
          }
          total += kept.length
          if (options.order === undefined) best.push(...kept)
          else
            best = mergeBest(best, kept.sort(options.order), options.order, options.limit ?? Number.POSITIVE_INFINITY)
        }
        const entries: Array<Entry> = []
        for (const [i, named] of best.entries()) {
          if (i > 0 && i % batch === 0) yield* Effect.yieldNow
          const entry = inspect(base, named)
          if (entry !== undefined) entries.push(entry)
        }
        return { entries, total }
      })
    )
  )

/** Every entry of a directory level, inspected, in the order the system lists them. */
export const listDirectory = (jail: Jail, dir: ResolvedPath): Effect.Effect<ReadonlyArray<Entry>, OpenError> =>
  Effect.map(listPage(jail, dir, { keep: () => true }), (page) => page.entries)
