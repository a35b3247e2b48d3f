/**
 * One level of a directory, read through its verified descriptor. Each entry
 * is inspected without following it (`lstat`); a symbolic link is resolved
 * only to say where it points (inside, outside, nowhere) and, when inside,
 * what its target is. Nothing outside the root is ever listed or stat'ed
 * beyond the link itself.
 *
 * @internal
 */
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import type { FileKind } from "./errors.ts"
import { type OpenError, withVerifiedDirectory } from "./open.ts"
import { isInside, relativeTo } from "./paths.ts"
import type { Jail, ResolvedPath } from "./resolve.ts"
import { attempt, call, kindOf, mapError } from "./system.ts"

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

export const listDirectory = (jail: Jail, dir: ResolvedPath): Effect.Effect<ReadonlyArray<Entry>, OpenError> =>
  withVerifiedDirectory(jail, dir.input, dir.real, (base) =>
    Effect.gen(function* () {
      const names = yield* call(() => fsp.readdir(base), mapError(dir.input, "list", "directory"))
      const entries = yield* Effect.forEach(
        names,
        (name): Effect.Effect<Entry | undefined> =>
          Effect.gen(function* () {
            const at = path.join(base, name)
            const relative = relativeTo(jail.root, path.join(dir.real, name))
            const st = yield* attempt(() => fsp.lstat(at)).pipe(Effect.option)
            // An entry removed since readdir is simply not there any more.
            if (st._tag === "None") return undefined
            const own = st.value
            const blocked = jail.policy.blockedBy(relative)
            if (!own.isSymbolicLink()) {
              return { name, relative, kind: kindOf(own), size: own.size, mtimeMs: own.mtimeMs, blocked }
            }
            const target = yield* attempt(() => fsp.realpath(at)).pipe(Effect.option)
            if (target._tag === "None") {
              return { name, relative, kind: "symlink", size: own.size, mtimeMs: own.mtimeMs, link: "broken", blocked }
            }
            if (!isInside(jail.root, target.value)) {
              return { name, relative, kind: "symlink", size: own.size, mtimeMs: own.mtimeMs, link: "outside", blocked }
            }
            const targetStat = yield* attempt(() => fsp.stat(target.value)).pipe(Effect.option)
            const of = targetStat._tag === "Some" ? targetStat.value : own
            return {
              name,
              relative,
              kind: targetStat._tag === "Some" ? kindOf(of) : "symlink",
              size: of.size,
              mtimeMs: of.mtimeMs,
              link: "inside",
              blocked: blocked ?? jail.policy.blockedBy(relativeTo(jail.root, target.value))
            }
          }),
        { concurrency: 16 }
      )
      return entries.filter((e) => e !== undefined)
    })
  )
