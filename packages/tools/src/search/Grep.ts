/**
 * `search.grep` searches the files of the workspace for a regular expression
 * with ripgrep's semantics: `.gitignore`, `.ignore` and `.rgignore` files are
 * honoured, hidden files and binary files are skipped, files are visited in
 * path order, and results come as matching files (`files`, the default),
 * matching lines with context (`content`, grouped by file, the files with
 * the most matches first, each match with the line and the column where it
 * starts) or counts per file (`count`). One path is searched, or several
 * (`paths`, in order, sharing the result limit, a file met twice searched
 * once); `glob` (or `filePattern`, the documents' name) selects files and
 * `excludePatterns` leave paths out. Every path is relative to the
 * workspace root; each path searched, and every file returned, passes
 * through the {@link Workspace} jail and its policy
 * (blocked names are never searched; `node_modules`, `.git`, `dist` and
 * `build` are skipped unless the path searched is inside one of them).
 *
 * Two engines give the same results: the `rg` binary when it is on `PATH`
 * (spawned with an argument vector, never a shell), and a TypeScript engine
 * otherwise; the {@link Engine} reference overrides the choice.
 *
 * **Why untrusted patterns cannot freeze the process.** Patterns run on
 * linear-time engines only. ripgrep's own is one (finite automata). In the
 * TypeScript engine the regex is re2js, a port of RE2 whose time is linear in
 * the line length whatever the pattern, so `(a+)+$` on a 50,000-character
 * line costs what `a` costs; a program-size cap (5,000 instructions) bounds
 * the constant. A time budget on V8's backtracking `RegExp` was not chosen:
 * it still spends the whole budget on every bad line and turns a slow pattern
 * into a failure instead of an answer. V8's `RegExp` runs only where it is
 * linear too: patterns with neither quantifiers nor groups (literals,
 * classes, `.`, anchors, `\b`), where a backtracking engine tries each
 * alternative once per position; it is about ten times faster than re2js
 * per line. Before any regex, a literal every match must contain (memchr on
 * its rarest byte, or a case-folding Horspool scan) skips the lines that
 * cannot match, so re2js sees few lines.
 *
 * The pattern language is the part RE2 and ripgrep share. Perl classes
 * (`\d \w \s`) and word boundaries (`\b`) are ASCII, as in RE2 (ripgrep
 * receives them rewritten); Unicode classes (`\p{L}`, `\p{Greek}`) are
 * available in both. A match never spans lines.
 *
 * @since 0.1.0
 */
import { existsSync } from "node:fs"
import { Tool, ToolError } from "@ugent/core"
import { Context, Effect, Layer, Schema, Stream } from "effect"
import {
  EngineUnavailable,
  InvalidGlob,
  InvalidPattern,
  SearchFailed,
  UnknownFileType
} from "../internal/search/errors.ts"
import { GlobSyntax, overrides } from "../internal/search/glob.ts"
import { compile } from "../internal/search/pattern.ts"
import type { Backend, Event, Mode, Query } from "../internal/search/query.ts"
import { available, ripgrep } from "../internal/search/ripgrep.ts"
import { fileTypes } from "../internal/search/types.ts"
import { typescript } from "../internal/search/typescript.ts"
import * as Workspace from "../Workspace.ts"

export {
  /**
   * The `ripgrep` engine was required and `rg` is not on `PATH`.
   *
   * @category errors
   * @since 0.1.0
   */
  EngineUnavailable,
  /**
   * The glob filter is not a valid glob.
   *
   * @category errors
   * @since 0.1.0
   */
  InvalidGlob,
  /**
   * The pattern holds a NUL byte, does not parse (with the engine's message),
   * or could only match a line break.
   *
   * @category errors
   * @since 0.1.0
   */
  InvalidPattern,
  /**
   * The engine failed for a reason other than the input.
   *
   * @category errors
   * @since 0.1.0
   */
  SearchFailed,
  /**
   * The type filter names no known file type.
   *
   * @category errors
   * @since 0.1.0
   */
  UnknownFileType
}

/**
 * Defaults: 100 results, 2 lines of context in content mode, lines cut at
 * 2,000 characters.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaults = { maxMatches: 100, context: 2, lineLength: 2000 } as const

/**
 * The file types `type` accepts (`ts`, `py`, `rust`, …), after ripgrep's
 * default list.
 *
 * @category constants
 * @since 0.1.0
 */
export const knownTypes: ReadonlyArray<string> = Object.keys(fileTypes).sort()

/** The most paths one search takes. */
const maxPaths = 100

const lines = (description: string) =>
  Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 })).annotate({ description }))

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  pattern: Schema.String.annotate({
    description:
      "Regular expression (RE2/ripgrep syntax), matched within single lines. Escape ( ) [ ] { } . * + ? | ^ $ \\ with a backslash to match them literally."
  }),
  path: Schema.optionalKey(
    Schema.String.annotate({
      description: "File or directory to search, relative to the workspace root (default: the root)."
    })
  ),
  paths: Schema.optionalKey(
    Schema.Array(Schema.String)
      .check(Schema.isMinLength(1), Schema.isMaxLength(maxPaths))
      .annotate({
        description: `Files or directories to search (instead of path), each relative to the workspace root; at most ${maxPaths}.`
      })
  ),
  glob: Schema.optionalKey(
    Schema.String.annotate({
      description:
        'Only paths matching this glob, relative to the root: "*.ts", "src/**/*.ts", "*.{ts,tsx}"; a leading ! excludes.'
    })
  ),
  filePattern: Schema.optionalKey(
    Schema.String.annotate({
      description: 'Only files matching this glob, as glob (give one of the two): "*.ts", "src/**/*.{ts,tsx}".'
    })
  ),
  excludePatterns: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: 'Globs of paths to leave out, e.g. ["*.test.ts", "fixtures/**"]; they win over glob and filePattern.'
    })
  ),
  type: Schema.optionalKey(
    Schema.String.annotate({ description: 'Only files of this type: "ts", "js", "py", "rust", "go", "md", …' })
  ),
  outputMode: Schema.optionalKey(
    Schema.Literals(["files", "content", "count"]).annotate({
      description: "files (default): matching files; content: matching lines with context; count: matches per file."
    })
  ),
  context: lines("Lines of context before and after each match in content mode (default 2)."),
  contextBefore: lines("Lines of context before each match (overrides context)."),
  contextAfter: lines("Lines of context after each match (overrides context)."),
  caseSensitive: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Match case exactly (default false: case-insensitive)." })
  ),
  maxMatches: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10_000 })).annotate({
      description:
        "Most results: matching lines (content), files (files) or file counts (count). Default 100; more are reported as truncated."
    })
  )
})

/**
 * @category models
 * @since 0.1.0
 */
export type Input = typeof Input.Type

const ContextLine = Schema.Struct({ line: Schema.Int, text: Schema.String })

const Match = Schema.Struct({
  line: Schema.Int,
  /** Where the first match in the line starts: 1-based, in characters of the whole line. */
  column: Schema.Int,
  text: Schema.String,
  before: Schema.Array(ContextLine),
  after: Schema.Array(ContextLine)
})

const summary = {
  /** Matching lines returned (content), files returned (files), or the sum of the counts returned (count). */
  totalMatches: Schema.Int,
  /** Files searched, up to the one where the search stopped when it was truncated. */
  filesSearched: Schema.Int,
  /** More results existed than `maxMatches`. */
  truncated: Schema.Boolean
}

/**
 * @category schemas
 * @since 0.1.0
 */
export const Output = Schema.Union([
  Schema.Struct({ mode: Schema.Literal("files"), files: Schema.Array(Schema.String), ...summary }),
  Schema.Struct({
    mode: Schema.Literal("content"),
    matches: Schema.Array(Schema.Struct({ path: Schema.String, matches: Schema.Array(Match) })),
    ...summary
  }),
  Schema.Struct({
    mode: Schema.Literal("count"),
    counts: Schema.Array(Schema.Struct({ path: Schema.String, count: Schema.Int })),
    ...summary
  })
])

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `search.grep` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Union([
  ToolError.InvalidInput,
  InvalidPattern,
  InvalidGlob,
  UnknownFileType,
  EngineUnavailable,
  SearchFailed,
  ...Workspace.pathErrors
])

/**
 * @category models
 * @since 0.1.0
 */
export type Failure = typeof Failure.Type

/**
 * Which engine runs a search: `auto` (the default: ripgrep when `rg` is on
 * `PATH`, TypeScript otherwise), `ripgrep` (fail with `EngineUnavailable`
 * without `rg`) or `typescript`.
 *
 * @category services
 * @since 0.1.0
 */
export const Engine = Context.Reference<"auto" | "ripgrep" | "typescript">("ugent/tools/search.grep/Engine", {
  defaultValue: () => "auto"
})

/**
 * A layer choosing the engine.
 *
 * **Example** (Forcing the TypeScript engine)
 * ```ts
 * import { Grep } from "@ugent/tools"
 * import { Effect } from "effect"
 * const engine = Effect.runSync(Grep.engineInUse.pipe(Effect.provide(Grep.layerEngine("typescript"))))
 * console.log(engine)
 * // => typescript
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerEngine = (engine: "auto" | "ripgrep" | "typescript"): Layer.Layer<never> =>
  Layer.succeed(Engine, engine)

const rgOnPath = new Map<string, boolean>()

/**
 * Whether the ripgrep engine can run here: an executable `rg` on `PATH`.
 *
 * @category utils
 * @since 0.1.0
 */
export const ripgrepAvailable = (): boolean => {
  const path = process.env.PATH ?? ""
  let found = rgOnPath.get(path)
  if (found === undefined) {
    found = available(path)
    rgOnPath.set(path, found)
  }
  return found
}

/**
 * The engine a search would use now, after the {@link Engine} setting and
 * the `PATH`.
 *
 * @category utils
 * @since 0.1.0
 */
export const engineInUse: Effect.Effect<"ripgrep" | "typescript", EngineUnavailable> = Effect.gen(function* () {
  const engine = yield* Engine
  if (engine === "typescript") return "typescript" as const
  if (ripgrepAvailable()) return "ripgrep" as const
  if (engine === "ripgrep") return yield* new EngineUnavailable({ engine: "ripgrep" })
  return "typescript" as const
})

const backends: Record<"ripgrep" | "typescript", Backend> = { ripgrep, typescript }

const procFd = existsSync("/proc/self/fd")

interface Base {
  readonly relative: string
  readonly kind: "file" | "directory"
}

/**
 * The searches of several paths as one: in the order given, sharing the
 * result limit (a path after the limit was reached is not searched), a file
 * found under an earlier path not searched again, and one `End` adding up
 * the files searched.
 */
const searchAll = (backend: Backend, queries: ReadonlyArray<Query>): Stream.Stream<Event, Failure> => {
  if (queries.length === 1) return backend.search(queries[0]!)
  const found = new Set<string>()
  let emitted = 0
  let searched = 0
  let truncated = false
  const one = (q: Query) =>
    Stream.suspend(() =>
      truncated || (q.base.kind === "file" && found.has(q.base.relative))
        ? Stream.empty
        : backend
            .search({
              ...q,
              limit: q.limit - emitted,
              excluded: (relative) => q.excluded(relative) || found.has(relative)
            })
            .pipe(
              Stream.filter((event) => {
                if (event._tag === "End") {
                  searched += event.filesSearched
                  truncated = event.truncated
                  return false
                }
                found.add(event.path)
                emitted++
                return true
              })
            )
    )
  return Stream.concat(
    Stream.flatMap(Stream.fromIterable(queries), one, { concurrency: 1 }),
    Stream.sync(() => ({ _tag: "End", filesSearched: searched, truncated }) as Event)
  )
}

/** Groups results as the output shows them; only `maxMatches` results are ever held. */
const collect = (mode: Mode, events: Stream.Stream<Event, Failure>): Effect.Effect<Output, Failure> =>
  Effect.gen(function* () {
    const files: Array<string> = []
    const counts: Array<{ path: string; count: number }> = []
    const groups = new Map<string, Array<typeof Match.Type>>()
    let end = { filesSearched: 0, truncated: false }
    yield* Stream.runForEach(events, (event) =>
      Effect.sync(() => {
        switch (event._tag) {
          case "File":
            files.push(event.path)
            break
          case "Count":
            counts.push({ path: event.path, count: event.count })
            break
          case "Match": {
            const group = groups.get(event.path)
            if (group === undefined) groups.set(event.path, [event.match])
            else group.push(event.match)
            break
          }
          case "End":
            end = { filesSearched: event.filesSearched, truncated: event.truncated }
        }
      })
    )
    // Files with the most results first; ties keep path order (the sort is stable).
    if (mode === "files") return { mode, files, totalMatches: files.length, ...end }
    if (mode === "count") {
      counts.sort((a, b) => b.count - a.count)
      return { mode, counts, totalMatches: counts.reduce((n, c) => n + c.count, 0), ...end }
    }
    const matches = [...groups].map(([path, ms]) => ({ path, matches: ms }))
    matches.sort((a, b) => b.matches.length - a.matches.length)
    return { mode, matches, totalMatches: matches.reduce((n, g) => n + g.matches.length, 0), ...end }
  })

/**
 * Searches file contents for a regular expression.
 *
 * **Example** (Which files mention a name, then where)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { Grep, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "grep-"))
 * mkdirSync(join(root, "src"))
 * writeFileSync(join(root, "src", "a.ts"), "const x = 1\nexport const total = x + 1\n")
 * writeFileSync(join(root, "notes.md"), "The Total is computed in a.ts\n")
 * writeFileSync(join(root, ".gitignore"), "notes.md\n")
 * const run = (input: Grep.Input) =>
 *   Effect.runPromise(Grep.grep.run(input).pipe(Effect.provide([Workspace.layer({ root }), Trust.grant(0)])))
 * const files = await run({ pattern: "total" })
 * console.log(files.mode, files.mode === "files" ? files.files : [], files.truncated)
 * // => files [ 'src/a.ts' ] false
 * const content = await run({ pattern: "\\btotal\\b", outputMode: "content", context: 1 })
 * console.log(JSON.stringify(content.mode === "content" ? content.matches : []))
 * // => [{"path":"src/a.ts","matches":[{"line":2,"column":14,"text":"export const total = x + 1","before":[{"line":1,"text":"const x = 1"}],"after":[]}]}]
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const grep = Tool.make({
  name: "search.grep",
  description:
    "Search file contents with a regular expression (ripgrep syntax, case-insensitive unless caseSensitive) in path or paths. outputMode: files (default), content (lines with line, column and context), count. Respects .gitignore; skips hidden and binary files. At most maxMatches results (default 100).",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 0,
  effects: { readsFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const compiled = compile(input.pattern, input.caseSensitive === true)
      if (!compiled.ok) {
        return yield* new InvalidPattern({
          pattern: input.pattern,
          reason: compiled.problem.reason,
          engine: "re2js",
          // re2js shows case-insensitivity as a `(?i)` prefix the caller never wrote.
          detail: compiled.problem.detail.replace("`(?i)", "`")
        })
      }
      let typeGlobs: ReadonlyArray<string> | undefined
      if (input.type !== undefined) {
        typeGlobs = fileTypes[input.type]
        if (typeGlobs === undefined) return yield* new UnknownFileType({ type: input.type, known: [...knownTypes] })
      }
      if (input.glob !== undefined && input.filePattern !== undefined) {
        return yield* new ToolError.InvalidInput({
          tool: "search.grep",
          issues: `glob and filePattern are the same filter (got ${JSON.stringify(input.glob)} and ${JSON.stringify(input.filePattern)}); give one of them`
        })
      }
      if (input.path !== undefined && input.paths !== undefined) {
        return yield* new ToolError.InvalidInput({
          tool: "search.grep",
          issues: "path and paths both name what to search; give one of them (paths takes a list)"
        })
      }
      const include = input.glob ?? input.filePattern
      // Exclusions come last: in ripgrep's overrides the last matching glob wins.
      const globs: Array<string> = include === undefined ? [] : [include]
      for (const exclude of input.excludePatterns ?? []) {
        if (exclude.startsWith("!")) {
          return yield* new InvalidGlob({
            glob: exclude,
            detail: "an exclude pattern already leaves out what it matches; drop the leading !"
          })
        }
        globs.push(`!${exclude}`)
      }
      for (const glob of globs) {
        if (glob.includes("\0")) return yield* new InvalidGlob({ glob, detail: "the glob contains a NUL byte" })
        yield* Effect.try({
          try: () => overrides([glob]),
          catch: (e) => new InvalidGlob({ glob, detail: e instanceof GlobSyntax ? e.message : String(e) })
        })
      }
      const mode: Mode = input.outputMode ?? "files"
      const context = mode === "content" ? (input.context ?? defaults.context) : 0
      const ws = yield* Workspace.Workspace
      // Every path passes the workspace jail and policy, each as `path` does; one named twice is searched once.
      const bases: Array<Base> = []
      for (const path of input.paths ?? [input.path ?? "."]) {
        const base = yield* ws.resolve(path)
        if (base.kind !== "file" && base.kind !== "directory") {
          return yield* new Workspace.NotAFile({
            path: base.input,
            kind: base.kind === "missing" ? "unknown" : base.kind
          })
        }
        if (!bases.some((b) => b.relative === base.relative)) bases.push({ relative: base.relative, kind: base.kind })
      }
      const query = (base: Base): Query => {
        // Inside a default-ignored directory the caller asked for, the default ignores stand aside.
        const applyIgnored = !ws.isIgnored(base.relative)
        return {
          pattern: compiled.value,
          mode,
          before: mode === "content" ? (input.contextBefore ?? context) : 0,
          after: mode === "content" ? (input.contextAfter ?? context) : 0,
          limit: input.maxMatches ?? defaults.maxMatches,
          lineLength: defaults.lineLength,
          root: ws.root,
          base,
          globs,
          typeGlobs,
          blockedGlobs: ws.policy.blocked,
          ignoredGlobs: applyIgnored ? ws.policy.ignored : [],
          excluded: (relative) => ws.blockedBy(relative) !== undefined || (applyIgnored && ws.isIgnored(relative)),
          procFd
        }
      }
      const engine = yield* engineInUse
      return yield* collect(mode, searchAll(backends[engine], bases.map(query))).pipe(
        Effect.withSpan("search.grep", { attributes: { engine, mode } })
      )
    })
})
