/**
 * Path resolution of the jail. An input path is first folded lexically
 * (relative inputs against the root, `.` and `..` removed) and must lie inside
 * the root; then its canonical real path (every symbolic link followed) must
 * lie inside too, and neither the path as named, nor any link on the way, nor
 * the final target may match a blocked name. A path to be created needs its
 * deepest existing ancestor, once real, to be inside.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import {
  BlockedPath,
  type FileKind,
  FileSystemError,
  InvalidPath,
  NotADirectory,
  NotAFile,
  NotFound,
  OutsideWorkspace
} from "./errors.ts"
import { isInside, lexical, relativeTo } from "./paths.ts"
import type { CompiledPolicy } from "./policy.ts"
import { attempt, attemptSync, call, callSync, kindOf, mapError } from "./system.ts"

export interface Jail {
  /** Canonical real path of the root. */
  readonly root: string
  /** The root as configured (absolute, maybe through links); absolute inputs under it are accepted too. */
  readonly configuredRoot: string
  readonly policy: CompiledPolicy
  /** Whether `/proc/self/fd` can name open descriptors (Linux). */
  readonly procFd: boolean
}

export interface ResolvedPath {
  /** The path as the caller gave it. */
  readonly input: string
  /** Canonical absolute path; for a file to be created, the real parent joined with the new names. */
  readonly real: string
  /** Path relative to the root, `/`-separated; `.` for the root. */
  readonly relative: string
  /** What is there now; `missing` for a file to be created. */
  readonly kind: FileKind | "missing"
}

export type PathError = InvalidPath | OutsideWorkspace | BlockedPath | NotFound | FileSystemError

const maxHops = 40

/** Folds the input and checks it before touching the file system (blocked names too, unless `blocked` is false). */
export const checkLexical = (
  jail: Jail,
  input: string,
  blocked = true
): Effect.Effect<{ readonly abs: string; readonly relative: string }, InvalidPath | OutsideWorkspace | BlockedPath> => {
  if (input.includes("\0")) return Effect.fail(new InvalidPath({ path: input, reason: "nul-byte" }))
  if (input === "") return Effect.fail(new InvalidPath({ path: input, reason: "empty" }))
  let abs = lexical(jail.root, input)
  // An absolute path written with the configured root (say /tmp/ws where /tmp is a link) names the same place.
  if (path.isAbsolute(input) && jail.configuredRoot !== jail.root && isInside(jail.configuredRoot, abs)) {
    abs = path.join(jail.root, relativeTo(jail.configuredRoot, abs))
  }
  // Refused before any lookup, so an outside path is never probed.
  if (!isInside(jail.root, abs)) return Effect.fail(new OutsideWorkspace({ path: input, reason: "outside" }))
  const relative = relativeTo(jail.root, abs)
  const rule = blocked ? jail.policy.blockedBy(relative) : undefined
  if (rule !== undefined) return Effect.fail(new BlockedPath({ path: input, rule, via: "path" }))
  return Effect.succeed({ abs, relative })
}

/** The locations of the symbolic links met while resolving `abs` (which lies lexically inside the root). */
const linkLocations = (jail: Jail, abs: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.sync(() => {
    const links: Array<string> = []
    const pending = relativeTo(jail.root, abs)
      .split("/")
      .filter((s) => s !== "." && s !== "")
    let resolved = jail.root
    while (pending.length > 0 && links.length <= maxHops) {
      const segment = pending.shift()!
      if (segment === ".") continue
      if (segment === "..") {
        resolved = path.dirname(resolved)
        continue
      }
      const next = path.join(resolved, segment)
      const st = fs.lstatSync(next, { throwIfNoEntry: false })
      if (st === undefined) break
      if (!st.isSymbolicLink()) {
        resolved = next
        continue
      }
      links.push(next)
      let target: string
      try {
        target = fs.readlinkSync(next)
      } catch {
        break
      }
      if (path.isAbsolute(target)) resolved = "/"
      pending.unshift(...target.split("/").filter((s) => s !== ""))
    }
    return links
  })

/** Checks a real path found for `input` (lexically `abs`): inside, not blocked, no blocked link on the way. */
export const checkReal = (
  jail: Jail,
  input: string,
  abs: string,
  real: string,
  outsideReason: "symlink-target" | "parent" = "symlink-target"
): Effect.Effect<string, OutsideWorkspace | BlockedPath> =>
  Effect.gen(function* () {
    if (!isInside(jail.root, real)) return yield* new OutsideWorkspace({ path: input, reason: outsideReason })
    const relative = relativeTo(jail.root, real)
    const rule = jail.policy.blockedBy(relative)
    if (rule !== undefined) return yield* new BlockedPath({ path: input, rule, via: "target" })
    if (real !== abs) {
      for (const link of yield* linkLocations(jail, abs)) {
        const name = isInside(jail.root, link) ? relativeTo(jail.root, link) : path.basename(link)
        const linkRule = jail.policy.blockedBy(name)
        if (linkRule !== undefined) return yield* new BlockedPath({ path: input, rule: linkRule, via: "link" })
      }
    }
    return relative
  })

/** The real path of `abs`, telling a dangling link apart from a missing file. */
const realpathOf = (
  input: string,
  abs: string,
  expected: "file" | "directory" | "any"
): Effect.Effect<string, PathError | NotADirectory> =>
  attemptSync(() => fs.realpathSync.native(abs)).pipe(
    Effect.catch((e) => {
      if (e.code !== "ENOENT") return Effect.fail(mapError(input, "resolve", expected)(e.cause))
      return attemptSync(() => fs.lstatSync(abs)).pipe(
        Effect.matchEffect({
          onFailure: () => Effect.fail(new NotFound({ path: input, expected })),
          onSuccess: (st) =>
            Effect.fail(
              st.isSymbolicLink()
                ? new InvalidPath({ path: input, reason: "dangling-symlink" })
                : new NotFound({ path: input, expected })
            )
        })
      )
    })
  )

/** Resolves a path that must exist, and checks what it is. */
export const resolveExisting = (
  jail: Jail,
  input: string,
  expect: "file" | "directory" | "any"
): Effect.Effect<ResolvedPath, PathError | NotAFile | NotADirectory> =>
  Effect.gen(function* () {
    const { abs } = yield* checkLexical(jail, input)
    const real = yield* realpathOf(input, abs, expect)
    const relative = yield* checkReal(jail, input, abs, real)
    const st = yield* callSync(() => fs.statSync(real), mapError(input, "inspect", expect))
    const kind = kindOf(st)
    if (expect === "file" && kind !== "file") return yield* new NotAFile({ path: input, kind })
    if (expect === "directory" && kind !== "directory") return yield* new NotADirectory({ path: input, kind })
    return { input, real, relative, kind }
  })

/**
 * Resolves a path to write: an existing regular file (through links whose
 * target is inside), or a missing one whose deepest existing ancestor is a
 * real directory inside the root. A dangling link is refused: following it
 * could create a file anywhere.
 */
export const resolveForWrite = (
  jail: Jail,
  input: string
): Effect.Effect<ResolvedPath, PathError | NotAFile | NotADirectory> =>
  Effect.gen(function* () {
    const { abs } = yield* checkLexical(jail, input)
    const existing = yield* attempt(() => fsp.lstat(abs)).pipe(Effect.option)
    if (existing._tag === "Some") {
      const real = yield* realpathOf(input, abs, "file")
      const relative = yield* checkReal(jail, input, abs, real)
      const st = yield* call(() => fsp.stat(real), mapError(input, "inspect", "file"))
      const kind = kindOf(st)
      if (kind !== "file") return yield* new NotAFile({ path: input, kind })
      return { input, real, relative, kind }
    }
    // Walk up to the deepest ancestor that exists; the root always does.
    const missing: Array<string> = []
    let ancestor = abs
    while (true) {
      missing.unshift(path.basename(ancestor))
      ancestor = path.dirname(ancestor)
      const st = yield* attempt(() => fsp.lstat(ancestor)).pipe(Effect.option)
      if (st._tag === "Some") break
      if (ancestor === jail.root || ancestor === "/") break
    }
    const realAncestor = yield* realpathOf(input, ancestor, "directory")
    yield* checkReal(jail, input, ancestor, realAncestor, "parent")
    const st = yield* call(() => fsp.stat(realAncestor), mapError(input, "inspect", "directory"))
    if (!st.isDirectory())
      return yield* new NotADirectory({ path: relativeTo(jail.root, realAncestor), kind: kindOf(st) })
    const real = path.join(realAncestor, ...missing)
    const relative = relativeTo(jail.root, real)
    const rule = jail.policy.blockedBy(relative)
    if (rule !== undefined) return yield* new BlockedPath({ path: input, rule, via: "target" })
    return { input, real, relative, kind: "missing" as const }
  })

/**
 * Resolves a path the way git sees one: the directories on the way are
 * resolved through the jail (a link among them must lead inside), the last
 * name is taken as it is (a link there is not followed: git stores links as
 * links). The path need not exist; its deepest existing directory must then
 * be inside. Blocked names are not refused: the caller decides what to do
 * with them.
 */
export const resolveEntry = (
  jail: Jail,
  input: string
): Effect.Effect<ResolvedPath, InvalidPath | OutsideWorkspace | FileSystemError> =>
  Effect.gen(function* () {
    const { abs } = yield* checkLexical(jail, input, false).pipe(
      Effect.catchTag("BlockedPath", () => Effect.die("unreachable: blocked names are not checked"))
    )
    if (abs === jail.root) return { input, real: jail.root, relative: ".", kind: "directory" as const }
    const name = path.basename(abs)
    // The deepest directory on the way that exists; the root always does.
    const missing: Array<string> = []
    let ancestor = path.dirname(abs)
    while (ancestor !== jail.root && ancestor !== "/") {
      const st = yield* attemptSync(() => fs.lstatSync(ancestor)).pipe(Effect.option)
      if (st._tag === "Some") break
      missing.unshift(path.basename(ancestor))
      ancestor = path.dirname(ancestor)
    }
    const realAncestor = yield* attemptSync(() => fs.realpathSync.native(ancestor)).pipe(
      Effect.catch((e): Effect.Effect<never, InvalidPath | FileSystemError> => {
        if (e.code === "ENOENT") return Effect.fail(new InvalidPath({ path: input, reason: "dangling-symlink" }))
        if (e.code === "ELOOP") return Effect.fail(new InvalidPath({ path: input, reason: "symlink-loop" }))
        const mapped = mapError(input, "resolve")(e.cause)
        return Effect.fail(
          mapped._tag === "FileSystemError" || mapped._tag === "InvalidPath"
            ? mapped
            : new FileSystemError({ path: input, operation: "resolve", code: e.code, retryable: false })
        )
      })
    )
    if (!isInside(jail.root, realAncestor)) {
      return yield* new OutsideWorkspace({ path: input, reason: "symlink-target" })
    }
    const real = path.join(realAncestor, ...missing, name)
    if (!isInside(jail.root, real) || real === jail.root) {
      return yield* new OutsideWorkspace({ path: input, reason: "outside" })
    }
    const st = missing.length > 0 ? undefined : yield* Effect.option(attemptSync(() => fs.lstatSync(real)))
    const kind = st === undefined || st._tag === "None" ? ("missing" as const) : kindOf(st.value)
    return { input, real, relative: relativeTo(jail.root, real), kind }
  })
