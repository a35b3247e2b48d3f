/**
 * `file.glob` finds files of the workspace by pattern (fast-glob syntax:
 * `**`, `*`, `?`, `{a,b}`, `[abc]`). Results are paths relative to the
 * workspace root, in a deterministic order (by name, or newest or largest
 * first, ties broken by path), cut at a limit with the total count reported.
 * Default-ignored directories (`node_modules`, `.git`, `dist`, `build`) are
 * not searched, hidden files only on request, `.gitignore` rules on request;
 * blocked names never appear. Symbolic links are not descended into; a link
 * to a regular file inside the workspace is listed, any other link is not.
 *
 * What remains: fast-glob walks by path, so a directory swapped for a link
 * to elsewhere between being seen and being read would have that elsewhere's
 * names listed under its own path (names only: every content read goes through
 * the jail, which refuses it). Checking each result's real path would close
 * this at the cost of a `realpath` per file.
 *
 * @since 0.1.0
 */
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Tool, ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import fg from "fast-glob"
import ignoreModule, { type Ignore } from "ignore"
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
      description: "Order: by path (default), newest first, or largest first; ties by path."
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
  totalMatches: Schema.Int,
  truncated: Schema.Boolean
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

// "ignore" is CommonJS with a `default` self-reference, the one name its types and its runtime agree on.
const ignore = ignoreModule.default

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
  return undefined
}

interface Match {
  readonly relative: string
  readonly size: number
  readonly mtimeMs: number
}

const byPath = (a: Match, b: Match) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0)

/** The .gitignore rules that apply under the searched directory, by the directory that holds them. */
const gitignores = (
  ws: Workspace.WorkspaceShape,
  base: Workspace.ResolvedPath,
  ignorePatterns: ReadonlyArray<string>,
  deep: number
): Effect.Effect<ReadonlyArray<{ readonly dir: string; readonly rules: Ignore }>> =>
  Effect.gen(function* () {
    const ancestors: Array<string> = []
    for (let dir = base.relative; ; dir = path.posix.dirname(dir)) {
      ancestors.push(dir === "." ? "" : dir)
      if (dir === "." || dir === "/" || dir === "") break
    }
    const below = yield* Effect.promise(() =>
      fg("**/.gitignore", {
        cwd: base.real,
        dot: true,
        deep,
        followSymbolicLinks: false,
        ignore: [...ignorePatterns],
        suppressErrors: true
      })
    )
    const prefix = base.relative === "." ? "" : `${base.relative}/`
    const files = [
      ...ancestors.map((d) => (d === "" ? ".gitignore" : `${d}/.gitignore`)),
      ...below.filter((f) => f !== ".gitignore").map((f) => prefix + f)
    ]
    const found = yield* Effect.forEach(
      [...new Set(files)],
      (file) =>
        ws.readFile(file, { maxBytes: 1 << 20 }).pipe(
          Effect.map((content) => ({
            dir: path.posix.dirname(file) === "." ? "" : path.posix.dirname(file),
            rules: ignore().add(Buffer.from(content.bytes).toString("utf8"))
          })),
          Effect.option
        ),
      { concurrency: 8 }
    )
    return found.flatMap((o) => (o._tag === "Some" ? [o.value] : []))
  })

const gitignored = (rules: ReadonlyArray<{ readonly dir: string; readonly rules: Ignore }>, relative: string) =>
  rules.some(
    ({ dir, rules }) =>
      (dir === "" || relative.startsWith(`${dir}/`)) &&
      rules.ignores(dir === "" ? relative : relative.slice(dir.length + 1))
  )

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
    "Find files by glob pattern (e.g. **/*.ts), relative to the workspace root or `path`. Sorted by path (or newest/largest first); node_modules, .git, dist and build are skipped.",
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
      const ws = yield* Workspace.Workspace
      const base = yield* ws.resolve(input.path ?? ".", { expect: "directory" })
      const sort = input.sort ?? "name"
      const ignorePatterns = ws.policy.ignored.flatMap((name) => [`**/${name}`, `**/${name}/**`])
      // fast-glob's `deep` counts the searched directory as level 1.
      const deep = maxDepth + 1
      const entries = yield* Effect.tryPromise({
        try: () =>
          fg(input.pattern, {
            cwd: base.real,
            dot: input.hidden === true,
            deep,
            followSymbolicLinks: false,
            onlyFiles: false,
            objectMode: true,
            stats: sort !== "name",
            ignore: ignorePatterns,
            suppressErrors: true
          }),
        catch: (e) => invalid(`the pattern could not be used: ${e instanceof Error ? e.message : String(e)}`)
      })
      const prefix = base.relative === "." ? "" : `${base.relative}/`
      const matches: Array<Match> = []
      for (const entry of entries) {
        // fast-glob gives normalized paths relative to `cwd`. Defence in depth: whatever the pattern expanded
        // to, nothing that climbs out or is absolute is returned.
        const relative = prefix + entry.path
        if (
          entry.path.startsWith("../") ||
          entry.path === ".." ||
          entry.path.includes("/../") ||
          path.isAbsolute(entry.path)
        ) {
          continue
        }
        if (ws.blockedBy(relative) !== undefined) continue
        if (entry.dirent.isFile()) {
          matches.push({ relative, size: entry.stats?.size ?? 0, mtimeMs: entry.stats?.mtimeMs ?? 0 })
        } else if (entry.dirent.isSymbolicLink()) {
          const target = yield* ws.resolve(relative, { expect: "file" }).pipe(Effect.option)
          if (target._tag === "None") continue
          if (sort === "name") {
            matches.push({ relative, size: 0, mtimeMs: 0 })
          } else {
            const st = yield* Effect.tryPromise(() => fsp.stat(target.value.real)).pipe(Effect.option)
            if (st._tag === "None") continue
            matches.push({ relative, size: st.value.size, mtimeMs: st.value.mtimeMs })
          }
        }
      }
      let kept: Array<Match> = matches
      if (input.respectGitignore === true) {
        const rules = yield* gitignores(ws, base, ignorePatterns, deep)
        kept = matches.filter((m) => !gitignored(rules, m.relative))
      }
      // Default string order is code-unit order, the same as byPath, and faster than a comparator.
      const ordered =
        sort === "name"
          ? kept.map((m) => m.relative).sort()
          : kept
              .sort(
                sort === "modified"
                  ? (a, b) => b.mtimeMs - a.mtimeMs || byPath(a, b)
                  : (a, b) => b.size - a.size || byPath(a, b)
              )
              .map((m) => m.relative)
      return {
        files: ordered.slice(0, limit),
        totalMatches: ordered.length,
        truncated: ordered.length > limit
      }
    })
})
