/**
 * `file.glob` finds files of the workspace by pattern (fast-glob syntax:
 * `**`, `*`, `?`, `{a,b}`, `[abc]`, extglobs; matched by picomatch, the
 * matcher fast-glob itself uses). Results are paths relative to the
 * workspace root, in a deterministic order (by name, or newest or largest
 * first, ties broken by path), cut at a limit with the total count reported.
 * Default-ignored directories (`node_modules`, `.git`, `dist`, `build`) are
 * not searched, hidden names only on request, `.gitignore` rules on request;
 * blocked names never appear.
 *
 * **Walked through the jail.** The directories are walked by the one walk
 * `search.grep` uses (`internal/search/walk.ts`): each opened through its
 * parent's verified descriptor, never through a symbolic link, so neither
 * the static part of a pattern (`rootlink/etc/*` with `rootlink -> /`) nor a
 * directory swapped for a link reaches outside. Directories the pattern
 * cannot match below are not entered. A symbolic link is listed only when
 * it leads to a regular file inside the workspace (resolved by the
 * workspace, its size and time are its target's); any other link (to a
 * directory, outside, or nowhere) is left out, never followed, and nothing
 * about its target is reported.
 *
 * **Nothing is left out silently.** `maxDepth` (10 by default) bounds the
 * walk; when a directory deeper than that could hold a match, the result is
 * `truncated` with `truncatedBy: ["maxDepth"]` (a leaf 300 levels down is not
 * found with the default, and the result says why), as it is with
 * `["limit"]` past `limit`. The walk reads each directory in small batches
 * and lets the event loop run every few hundred entries, so a directory of
 * 100,000 entries holds the server for milliseconds at a time, not seconds.
 *
 * @since 0.1.0
 */
import { existsSync } from "node:fs"
import * as fsp from "node:fs/promises"
import { Tool, ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import braces from "braces"
import picomatch from "picomatch"
import { type Candidate, walk } from "../internal/search/walk.ts"
import { isoTime } from "../internal/workspace/isoTime.ts"
import * as Workspace from "../Workspace.ts"

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  pattern: Schema.String.annotate({
    description: "Glob pattern relative to `path`, e.g. `**/*.ts` or `src/**/*.{ts,tsx}`."
  }),
  path: Schema.optionalKey(
    Schema.String.annotate({ description: "Directory to search, relative to the workspace root (default: the root)." })
  ),
  sort: Schema.optionalKey(
    Schema.Literals(["name", "modified", "size"]).annotate({
      description: "Order: by path (default), newest or largest first."
    })
  ),
  sortBy: Schema.optionalKey(
    Schema.Literals(["name", "mtime", "size"]).annotate({
      description: "Order, as sort (give one): name, mtime or size."
    })
  ),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({ description: "Most paths to return (default 500)." })
  ),
  maxDepth: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
      description: "Directory levels below `path` to search (default 10; 0: only `path` itself)."
    })
  ),
  hidden: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Match names starting with '.' (default false)." })
  ),
  respectGitignore: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Leave out files that .gitignore files ignore (default false)." })
  )
})

/**
 * @category schemas
 * @since 0.1.0
 */
export const Output = Schema.Struct({
  /** Matching files, relative to the workspace root. */
  files: Schema.Array(Schema.String),
  /** The same files, in the same order, each with its size in bytes and its ISO 8601 modification time (a link's are its target's). */
  entries: Schema.Array(Schema.Struct({ path: Schema.String, size: Schema.Int, modified: Schema.String })),
  /** Matches found in the directories searched (all of them, past `limit`). */
  totalMatches: Schema.Int,
  /** Something was left out: matches past `limit`, or directories below `maxDepth` (see `truncatedBy`). */
  truncated: Schema.Boolean,
  /**
   * Why, when `truncated`: `limit` (more matches than returned) and/or
   * `maxDepth` (directories deeper than `maxDepth`, which the pattern could
   * match in, were not searched: raise `maxDepth` to search them).
   */
  truncatedBy: Schema.optionalKey(Schema.Array(Schema.Literals(["limit", "maxDepth"])))
})

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `file.glob` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Union([ToolError.InvalidInput, ...Workspace.pathErrors, Workspace.ConcurrentChange])

/**
 * Default limits: 500 paths, 10 directory levels.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaults = { limit: 500, maxDepth: 10 } as const

/** Why a pattern is refused: it could name something outside the directory searched. */
const patternProblem = (pattern: string): string | undefined => {
  if (pattern.includes("\0")) return "the pattern contains a NUL byte"
  if (pattern === "") return "the pattern is empty; use **/* for every file"
  if (/(^|[{,(|])\s*[/~]/.test(pattern) || /^[a-zA-Z]:/.test(pattern)) {
    return "the pattern is absolute; give it relative to `path` (e.g. src/**/*.ts)"
  }
  if (pattern.split(/[/{},()|]/).some((token) => token.trim() === "..")) {
    return "the pattern contains `..`; search from a higher `path` instead"
  }
  if (pattern.startsWith("!") && !pattern.startsWith("!(")) {
    return "negative patterns are not supported; give the files to find (e.g. src/**/*.ts)"
  }
  return undefined
}

/** The pattern's `/`-separated segments, or `undefined` when a `/` sits inside a group (`{a,b/c}`). */
const segmentsOf = (pattern: string): ReadonlyArray<string> | undefined => {
  const out: Array<string> = []
  let depth = 0
  let current = ""
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === "\\") {
      current += c + (pattern[i + 1] ?? "")
      i++
      continue
    }
    if (c === "{" || c === "[" || c === "(") depth++
    else if ((c === "}" || c === "]" || c === ")") && depth > 0) depth--
    if (c === "/") {
      if (depth > 0) return undefined
      out.push(current)
      current = ""
    } else current += c
  }
  out.push(current)
  return out.filter((s) => s !== "")
}

/**
 * A pattern compiled for a walk: whether a file matches, and whether a
 * directory may hold a match (so that nothing else is entered). Hidden
 * names are matched only with `dot`, by picomatch's rules (`**` never
 * enters a hidden directory; a segment written with a leading `.` does).
 */
/** The most patterns a brace expansion may give; a pattern that would give more is matched whole. */
const maxAlternatives = 256

/**
 * The pattern's brace alternatives (`{a/**,b}` → `a/**`, `b`), expanded by
 * `braces` (picomatch's own expander) when that gives at most
 * {@link maxAlternatives}: picomatch alone misreads a `**` at the start of an
 * alternative, and each alternative's segments let the walk skip directories.
 */
const alternativesOf = (pattern: string): ReadonlyArray<string> => {
  if (!pattern.includes("{")) return [pattern]
  // An upper bound of the expansion before making it: the product of every group's size (or range's length).
  let bound = 1
  const open: Array<{ start: number; commas: number }> = []
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === "\\") i++
    else if (c === "{") open.push({ start: i, commas: 0 })
    else if (c === "," && open.length > 0) open[open.length - 1]!.commas++
    else if (c === "}" && open.length > 0) {
      const group = open.pop()!
      const range = /^(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.-?\d+)?$/.exec(pattern.slice(group.start + 1, i))
      const at = (end: string) => (/^-?\d+$/.test(end) ? Number(end) : end.charCodeAt(0))
      bound *= range !== null ? Math.abs(at(range[2]!) - at(range[1]!)) + 1 : group.commas + 1
      if (bound > maxAlternatives) return [pattern]
    }
  }
  try {
    const expanded = braces(pattern, { expand: true, rangeLimit: maxAlternatives })
    return expanded.length > 0 && expanded.length <= maxAlternatives ? expanded : [pattern]
  } catch {
    return [pattern]
  }
}

const compilePattern = (raw: string, dot: boolean) => {
  const alternatives = alternativesOf(raw.replace(/^(\.\/)+/, "")).map((a) => a.replace(/^(\.\/)+/, ""))
  const full = picomatch([...alternatives], { dot })
  const mayHolds = alternatives.map((pattern) => {
    const segments = segmentsOf(pattern)
    const matchers = segments?.map((s) => (s === "**" ? undefined : picomatch(s, { dot })))
    return (dir: ReadonlyArray<string>): boolean => {
      if (segments === undefined || matchers === undefined) return true
      const fits = (i: number, j: number): boolean => {
        if (j === dir.length) return i < segments.length
        if (i === segments.length) return false
        const m = matchers[i]
        if (m === undefined) {
          return fits(i + 1, j) || ((dot || !dir[j]!.startsWith(".")) && fits(i, j + 1))
        }
        return m(dir[j]!) && fits(i + 1, j + 1)
      }
      return fits(0, 0)
    }
  })
  const mayHold = (dir: ReadonlyArray<string>): boolean => mayHolds.some((holds) => holds(dir))
  return { matches: (path: string) => full(path), mayHold }
}

interface Match {
  readonly relative: string
  readonly size: number
  readonly mtimeMs: number
}

const procFd = existsSync("/proc/self/fd")

const byPath = (a: Match, b: Match) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0)

/**
 * Finds files by glob pattern.
 *
 * **Example** (TypeScript files, node_modules left out)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { Glob, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "glob-"))
 * mkdirSync(join(root, "src"))
 * mkdirSync(join(root, "node_modules"))
 * for (const f of ["src/b.ts", "src/a.ts", "node_modules/x.ts", "notes.md"]) writeFileSync(join(root, f), "")
 * const out = await Effect.runPromise(
 *   Glob.glob.run({ pattern: "**\/*.ts" }).pipe(Effect.provide([Workspace.layer({ root }), Trust.grant(0)]))
 * )
 * console.log(out.files, out.totalMatches, out.truncated)
 * // => [ 'src/a.ts', 'src/b.ts' ] 2 false
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const glob = Tool.make({
  name: "file.glob",
  description:
    "Find files by glob pattern (e.g. **/*.ts) under the root or `path`, each with its size and modification time, by path or sortBy. node_modules, .git, dist and build are skipped; maxDepth levels (default 10); truncatedBy says when matches were left out.",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 0,
  effects: { readsFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const invalid = (issues: string) => new ToolError.InvalidInput({ tool: "file.glob", issues })
      const problem = patternProblem(input.pattern)
      if (problem !== undefined) return yield* invalid(problem)
      const limit = input.limit ?? defaults.limit
      const maxDepth = input.maxDepth ?? defaults.maxDepth
      if (!(Number.isInteger(limit) && limit >= 0)) {
        return yield* invalid(`limit must be an integer of at least 0 (got ${limit})`)
      }
      if (!(Number.isInteger(maxDepth) && maxDepth >= 0)) {
        return yield* invalid(`maxDepth must be an integer of at least 0 (got ${maxDepth})`)
      }
      const bySortBy = input.sortBy === undefined ? undefined : input.sortBy === "mtime" ? "modified" : input.sortBy
      if (input.sort !== undefined && bySortBy !== undefined && input.sort !== bySortBy) {
        return yield* invalid(
          `sort and sortBy name two orders (got ${input.sort} and ${input.sortBy}); give one of them`
        )
      }
      const ws = yield* Workspace.Workspace
      const base = yield* ws.resolve(input.path ?? ".", { expect: "directory" })
      const sort = input.sort ?? bySortBy ?? "name"
      const compiled = yield* Effect.try({
        try: () => compilePattern(input.pattern, input.hidden === true),
        catch: (e) => invalid(`the pattern could not be used: ${e instanceof Error ? e.message : String(e)}`)
      })
      const prefix = base.relative === "." ? "" : `${base.relative}/`
      const fromBase = (relative: string) => relative.slice(prefix.length)
      // Inside a default-ignored directory the caller asked for, the default ignores stand aside.
      const applyIgnored = !ws.isIgnored(base.relative)
      const gitignore = input.respectGitignore === true
      /** Directories the pattern could match in that `maxDepth` kept the walk out of. */
      let deeper = 0
      const keep = (c: Candidate): boolean => {
        if (gitignore && c.ignored() === "ignore") return false
        const rel = fromBase(c.relative)
        if (!c.isDir) return compiled.matches(rel)
        if (!compiled.mayHold(rel.split("/"))) return false
        if (c.depth > maxDepth) {
          deeper++
          return false
        }
        return true
      }
      const entries = walk({
        root: ws.root,
        base: base.relative,
        excluded: (relative) => ws.blockedBy(relative) !== undefined || (applyIgnored && ws.isIgnored(relative)),
        ignoreFiles: gitignore ? { rgignore: false, ignore: false, gitignore: true } : undefined,
        parents: gitignore,
        keep,
        links: true,
        // The results are sorted at the end; unsorted, each directory is read as it is walked.
        sorted: false,
        procFd,
        // Every few hundred entries looked at, matching or not, the event loop runs (and an interruption lands).
        ticks: true
      })
      const matches: Array<Match> = []
      for (const entry of entries) {
        if (entry.kind === "tick") {
          yield* Effect.yieldNow
          continue
        }
        if (entry.kind === "file") {
          // Read now, through the directory the walk holds open: a file gone since is left out.
          const st = entry.lstat()
          if (st === undefined) continue
          matches.push({ relative: entry.relative, size: st.size, mtimeMs: st.mtimeMs })
          continue
        }
        // A link is listed when the workspace resolves it to a regular file inside; its target is never walked.
        const target = yield* ws.resolve(entry.relative, { expect: "file" }).pipe(Effect.option)
        if (target._tag === "None") continue
        const st = yield* Effect.tryPromise(() => fsp.stat(target.value.real)).pipe(Effect.option)
        if (st._tag === "None") continue
        matches.push({ relative: entry.relative, size: st.value.size, mtimeMs: st.value.mtimeMs })
      }
      const ordered = matches.sort(
        sort === "name"
          ? byPath
          : sort === "modified"
            ? (a, b) => b.mtimeMs - a.mtimeMs || byPath(a, b)
            : (a, b) => b.size - a.size || byPath(a, b)
      )
      const shown = ordered.slice(0, limit)
      const truncatedBy = [
        ...(ordered.length > limit ? (["limit"] as const) : []),
        ...(deeper > 0 ? (["maxDepth"] as const) : [])
      ]
      return {
        files: shown.map((m) => m.relative),
        entries: shown.map((m) => ({ path: m.relative, size: m.size, modified: isoTime(m.mtimeMs) })),
        totalMatches: ordered.length,
        truncated: truncatedBy.length > 0,
        ...(truncatedBy.length > 0 ? { truncatedBy } : {})
      }
    })
})
