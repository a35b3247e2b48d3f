/**
 * `file.read` shows a window of a text file of the workspace, numbered
 * `N<TAB>line`, and says exactly what it left out: the window's first and
 * last line, the file's line count, whether more follows and where to
 * continue. It returns a `ReadProof` of what it showed (the whole file, or
 * the lines of the window), which `file.write` and `file.edit` require.
 *
 * @since 0.1.0
 */
import { ReadProof, Tool, ToolError } from "@ugent/core"
import { Context, Effect, Layer, Schema } from "effect"
import { issueFor } from "../internal/workspace/causal.ts"
import { numbered, readLines } from "../internal/workspace/text.ts"
import { isoTime } from "../internal/workspace/isoTime.ts"
import * as Workspace from "../Workspace.ts"

/**
 * The limits of `file.read`: lines per read when `limit` is not given,
 * characters per line before it is cut, and bytes per file.
 *
 * @category models
 * @since 0.1.0
 */
export interface Limits {
  /** Lines shown when the call gives no `limit` (2,000). */
  readonly lines: number
  /** Characters of a line shown before it is cut (2,000). */
  readonly lineLength: number
  /** Bytes a file may have to be read at all (1 MB). */
  readonly maxBytes: number
}

/**
 * The limits in force; a reference with the defaults 2,000 lines, 2,000
 * characters per line, 1 MB.
 *
 * @category services
 * @since 0.1.0
 */
export const Limits = Context.Reference<Limits>("ugent/tools/file.read/Limits", {
  defaultValue: () => ({ lines: 2000, lineLength: 2000, maxBytes: Workspace.defaultMaxBytes })
})

/**
 * A layer setting some of the limits (the others keep their defaults), e.g.
 * the 500-line budget of the design documents.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerLimits = (limits: Partial<Limits>): Layer.Layer<never> =>
  Layer.succeed(Limits, { lines: 2000, lineLength: 2000, maxBytes: Workspace.defaultMaxBytes, ...limits })

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  path: Schema.String.annotate({ description: "File path, relative to the workspace root (or absolute inside it)." }),
  offset: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description: "First line to show, 1-based (default 1). Use the nextOffset of a previous read to continue.",
      default: 1
    })
  ),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
      description:
        "How many lines to show (default 2000, or the caller's maxLines). 0 shows none and only reports the counts."
    })
  ),
  startLine: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description: "First line to show, 1-based: the same as offset (give one of the two)."
    })
  ),
  endLine: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description:
        "Last line to show, 1-based and inclusive (instead of limit): startLine 10 and endLine 20 show 11 lines."
    })
  )
})

/**
 * @category schemas
 * @since 0.1.0
 */
export const Output = Schema.Struct({
  /** Path relative to the workspace root. */
  path: Schema.String,
  /** The shown lines as `N<TAB>line`, joined with `\n`. */
  content: Schema.String,
  startLine: Schema.Int,
  /** The last line shown; `startLine - 1` when none was. */
  endLine: Schema.Int,
  totalLines: Schema.Int,
  /** Whether something was left out: lines after `endLine`, or the end of a cut line. */
  truncated: Schema.Boolean,
  /** The offset that continues the read, or `null` at the end. */
  nextOffset: Schema.NullOr(Schema.Int),
  /** How many shown lines were cut at the line-length limit. */
  linesCut: Schema.Int,
  notice: Schema.optionalKey(Schema.String),
  metadata: Schema.Struct({
    size: Schema.Int,
    /** ISO 8601 modification time. */
    modified: Schema.String,
    encoding: Schema.Literals(["utf-8", "utf-8-bom"]),
    lineEndings: Schema.Literals(["lf", "crlf", "mixed", "none"])
  }),
  proof: ReadProof.ReadProofFromToken
})

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `file.read` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Union([
  ToolError.InvalidInput,
  ...Workspace.pathErrors,
  Workspace.ConcurrentChange,
  Workspace.BinaryFile,
  Workspace.FileTooLarge
])

/**
 * The window asked for, as `offset` and `limit`: `startLine` is `offset`
 * under the documents' name, and `endLine` (inclusive) stands for the limit
 * that reaches it. Giving a line by both names, or an end before the start,
 * is an error that says what to send.
 */
const lineWindow = (input: typeof Input.Type): { offset?: number; limit?: number } | string => {
  const { offset, limit, startLine, endLine } = input
  if (startLine !== undefined && offset !== undefined) {
    return `startLine and offset both name the first line (got ${startLine} and ${offset}); give one of them`
  }
  if (endLine !== undefined && limit !== undefined) {
    return `endLine and limit both bound the lines shown (got ${endLine} and ${limit}); give one of them`
  }
  const first = startLine ?? offset
  if (endLine === undefined)
    return { ...(first === undefined ? {} : { offset: first }), ...(limit === undefined ? {} : { limit }) }
  if (!Number.isInteger(endLine) || endLine < (first ?? 1)) {
    return `endLine must be an integer at or after the first line ${first ?? 1} (got ${endLine}); endLine is inclusive`
  }
  return { offset: first ?? 1, limit: endLine - (first ?? 1) + 1 }
}

/**
 * Reads a window of a text file. Binary files (a NUL byte or invalid UTF-8
 * in the first 8 KB) are refused without reading the rest; files over 1 MB,
 * directories, FIFOs, devices and sockets are refused; the proof covers the
 * whole file when every line was shown whole, else the shown lines.
 *
 * **Example** (Reading a file and continuing)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { Read, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "read-"))
 * writeFileSync(join(root, "poem.txt"), "one\ntwo\nthree\n")
 * const out = await Effect.runPromise(
 *   Read.read.run({ path: "poem.txt", limit: 2 }).pipe(Effect.provide([Workspace.layer({ root }), Trust.grant(0)]))
 * )
 * console.log(JSON.stringify(out.content))
 * // => "1\tone\n2\ttwo"
 * console.log(out.totalLines, out.truncated, out.nextOffset, out.proof.coverage)
 * // => 3 true 3 { _tag: 'Lines', start: 1, end: 2 }
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const read = Tool.make({
  name: "file.read",
  description:
    "Read a text file of the workspace. Lines are numbered `N<TAB>line`; read a range with startLine/endLine (1-based, inclusive) or offset/limit, and the next part with offset = nextOffset. Returns a proof to pass to file.write or file.edit.",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 0,
  effects: { readsFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const window = lineWindow(input)
      if (typeof window === "string") return yield* new ToolError.InvalidInput({ tool: "file.read", issues: window })
      const { path } = input
      const { offset, limit } = window
      if (offset !== undefined && !(Number.isInteger(offset) && offset >= 1)) {
        return yield* new ToolError.InvalidInput({
          tool: "file.read",
          issues: `offset is 1-based and must be an integer of at least 1 (got ${offset}); use 1 for the first line`
        })
      }
      if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) {
        return yield* new ToolError.InvalidInput({
          tool: "file.read",
          issues: `limit must be an integer of at least 0 (got ${limit})`
        })
      }
      const limits = yield* Limits
      const ws = yield* Workspace.Workspace
      const file = yield* ws.readFile(path, { maxBytes: limits.maxBytes, text: true })
      const bom = file.bytes[0] === 0xef && file.bytes[1] === 0xbb && file.bytes[2] === 0xbf
      const from = bom ? 3 : 0
      const startLine = offset ?? 1
      const shown = readLines(file.bytes, from, startLine, limit ?? limits.lines, limits.lineLength)
      const { totalLines, lineEndings } = shown
      const endLine = startLine + shown.lines.length - 1
      const content = numbered(shown.lines, startLine)
      const whole = startLine === 1 && endLine === totalLines && shown.cut === 0
      const proof = yield* issueFor(
        ws,
        file.path,
        file.bytes,
        whole ? { _tag: "Whole" } : { _tag: "Lines", start: startLine, end: endLine }
      )
      const notice =
        totalLines === 0
          ? "The file is empty."
          : startLine > totalLines
            ? `Offset ${startLine} is past the end of the file (${totalLines} lines). Use an offset from 1 to ${totalLines}.`
            : undefined
      return {
        path: file.path.relative,
        content,
        startLine,
        endLine,
        totalLines,
        truncated: endLine < totalLines || shown.cut > 0,
        nextOffset: endLine < totalLines ? endLine + 1 : null,
        linesCut: shown.cut,
        ...(notice === undefined ? {} : { notice }),
        metadata: {
          size: file.size,
          modified: isoTime(file.mtimeMs),
          encoding: bom ? ("utf-8-bom" as const) : ("utf-8" as const),
          lineEndings
        },
        proof
      }
    })
})
