/**
 * `file.list` shows one level of a directory of the workspace: directories
 * first, then files, each group in alphabetical order, with size and
 * modification time. Hidden entries, default-ignored names (`node_modules`,
 * `dist`, …) and blocked names are left out unless asked for (blocked ones
 * always); a symbolic link is reported with where it leads and is never
 * followed out of the workspace.
 *
 * @since 0.1.0
 */
import { Tool, ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import * as Workspace from "../Workspace.ts"
import { isoTime } from "../internal/workspace/isoTime.ts"

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  path: Schema.optionalKey(
    Schema.String.annotate({ description: "Directory, relative to the workspace root (default: the root)." })
  ),
  hidden: Schema.optionalKey(Schema.Boolean.annotate({ description: "Include entries whose name starts with '.'." })),
  ignored: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Include default-ignored names (node_modules, dist, build)." })
  ),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
      description: "Most entries to return (default 1000)."
    })
  )
})

/**
 * @category schemas
 * @since 0.1.0
 */
export const ListEntry = Schema.Struct({
  name: Schema.String,
  /** Path relative to the workspace root. */
  path: Schema.String,
  isDir: Schema.Boolean,
  size: Schema.Number,
  /** ISO 8601 modification time. */
  modified: Schema.String,
  kind: Workspace.FileKind,
  /** For a symbolic link: where it leads. Only `inside` links report their target's kind and size. */
  link: Schema.optionalKey(Schema.Literals(["inside", "outside", "broken"]))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export const Output = Schema.Struct({
  /** The directory, relative to the workspace root. */
  path: Schema.String,
  entries: Schema.Array(ListEntry),
  /** Entries that passed the filters, before the limit. */
  total: Schema.Int,
  truncated: Schema.Boolean
})

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `file.list` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Union([ToolError.InvalidInput, ...Workspace.pathErrors, Workspace.ConcurrentChange])

/**
 * The default number of entries of a listing.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultLimit = 1000

const byName = (a: string, b: string) => {
  const la = a.toLowerCase()
  const lb = b.toLowerCase()
  return la < lb ? -1 : la > lb ? 1 : a < b ? -1 : a > b ? 1 : 0
}

/**
 * Lists one directory level.
 *
 * **Example** (Directories first)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { List, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "list-"))
 * mkdirSync(join(root, "src"))
 * writeFileSync(join(root, "README.md"), "# hi\n")
 * writeFileSync(join(root, ".env"), "KEY=1\n")
 * const out = await Effect.runPromise(List.list.run({}).pipe(Effect.provide([Workspace.layer({ root }), Trust.grant(0)])))
 * console.log(out.entries.map((e) => `${e.name}${e.isDir ? "/" : ""}`), out.truncated)
 * // => [ 'src/', 'README.md' ] false
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const list = Tool.make({
  name: "file.list",
  description:
    "List one directory level of the workspace: directories first, then files, with size and modification time. Hidden and ignored entries are skipped unless asked for.",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 0,
  effects: { readsFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const limit = input.limit ?? defaultLimit
      if (!(Number.isInteger(limit) && limit >= 0)) {
        return yield* new ToolError.InvalidInput({
          tool: "file.list",
          issues: `limit must be an integer of at least 0 (got ${limit})`
        })
      }
      const ws = yield* Workspace.Workspace
      const dir = yield* ws.resolve(input.path ?? ".", { expect: "directory" })
      // Only the page shown is inspected; the names are filtered and ordered from the listing itself.
      const page = yield* ws.listPage(dir, {
        keep: (e) =>
          e.blocked === undefined &&
          (input.hidden === true || !e.name.startsWith(".")) &&
          (input.ignored === true || !ws.isIgnored(e.name)),
        order: (a, b) =>
          a.kind === "directory" && b.kind !== "directory"
            ? -1
            : b.kind === "directory" && a.kind !== "directory"
              ? 1
              : byName(a.name, b.name),
        limit
      })
      return {
        path: dir.relative,
        entries: page.entries.map((e) => ({
          name: e.name,
          path: e.relative,
          isDir: e.kind === "directory",
          size: e.size,
          modified: isoTime(e.mtimeMs),
          kind: e.kind,
          ...(e.link === undefined ? {} : { link: e.link })
        })),
        total: page.total,
        truncated: page.total > limit
      }
    })
})
