/**
 * `Summarized` is working memory for a model's context: the full result of a
 * call is stored under an id in the `MemoryStore`, and only a short summary
 * (under 100 tokens, with the id and how to read the rest) goes back to the
 * caller. {@link memoryRead} (`memory.read`, served as `self.memory.read`)
 * fetches the full result, or a range of characters or lines of it, by id.
 *
 * @since 0.1.0
 */
import { Tool, type Trust } from "@ugent/core"
import { Effect, Option, Schema } from "effect"
import { dual } from "effect/Function"
import { canonicalJson } from "./internal/canonical.ts"
import { jsonOf, optionEncoder } from "./internal/jsonValue.ts"
import { entryOf, MemoryNotFound, MemoryStore } from "./MemoryStore.ts"
import { StoreError } from "./StoreError.ts"

/**
 * What a summarized tool returns instead of its full result.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Summary = Schema.Struct({
  /** Where the full result is kept: pass it to `memory.read`. */
  memoryId: Schema.String,
  summary: Schema.String,
  /** The size of the full result as stored: characters and lines. */
  chars: Schema.Int,
  lines: Schema.Int,
  /** What to call to read the details. */
  hint: Schema.String
})

/**
 * @category models
 * @since 0.1.0
 */
export type Summary = typeof Summary.Type

/**
 * The options of {@link Summarized}.
 *
 * @category models
 * @since 0.1.0
 */
export interface SummarizedOptions<B = unknown> {
  /** Writes the summary from the result and its stored text (default: a description of its shape and start). */
  readonly summarize?: ((output: B, text: string) => string) | undefined
  /** The longest summary, in characters (default 200, so that the whole answer stays under 100 tokens). */
  readonly maxSummaryChars?: number | undefined
  /** The tool name the entry is filed under (default: the tool's name). */
  readonly path?: string | undefined
}

const cut = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`)
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim()

const describe = (value: unknown, text: string, lines: number): string => {
  if (typeof value === "string") {
    const first = value.split("\n").find((l) => l.trim() !== "") ?? ""
    return `${lines} line(s), ${text.length} chars. Starts: ${oneLine(first)}`
  }
  if (Array.isArray(value)) {
    return `${value.length} item(s). First: ${value.length > 0 ? oneLine(canonicalJson(jsonOf(value[0])) ?? "") : "none"}`
  }
  if (typeof value === "object" && value !== null) {
    const fields = Object.entries(value).map(([k, v]) =>
      Array.isArray(v)
        ? `${k}: ${v.length} item(s)`
        : typeof v === "string" && v.length > 40
          ? `${k}: ${v.length} chars`
          : `${k}: ${oneLine(canonicalJson(jsonOf(v)) ?? "")}`
    )
    return `{ ${fields.join(", ")} }`
  }
  return String(value)
}

// The wrapper itself; exported below with the `memory.read` tool attached.
const summarized: {
  <B = unknown>(
    options?: SummarizedOptions<B>
  ): <A, B2 extends B, E, R>(self: Tool.Tool<A, B2, E, R>) => Tool.Tool<A, Summary, E | StoreError, R | MemoryStore>
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: SummarizedOptions<B>
  ): Tool.Tool<A, Summary, E | StoreError, R | MemoryStore>
} = dual(
  (args) => Tool.isTool(args[0]),
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: SummarizedOptions<B>
  ): Tool.Tool<A, Summary, E | StoreError, R | MemoryStore> => {
    const path = options?.path ?? self.name
    const max = options?.maxSummaryChars ?? 200
    const encodeOutput = optionEncoder(self.output)
    return Tool.wrap(
      self,
      (run) => (a) =>
        Effect.gen(function* () {
          const output = yield* run(a)
          const memory = yield* MemoryStore
          const encoded = encodeOutput(output)
          const content = jsonOf(Option.isSome(encoded) ? encoded.value : output)
          // The same text and sizes the store keeps, so `chars` and `lines` match what memory.read pages through.
          const stored = entryOf({ id: "", tool: path, content, summary: "", createdAt: 0 })
          const summary = cut(
            options?.summarize === undefined
              ? describe(content, stored.content, stored.lines)
              : options.summarize(output, stored.content),
            max
          )
          const memoryId = yield* memory.put({ tool: path, content, summary })
          return {
            memoryId,
            summary,
            chars: stored.size,
            lines: stored.lines,
            hint: `Full result: memory.read {"id":"${memoryId}"}`
          }
        }),
      {
        output: Summary,
        failure: Tool.failureWith(self, StoreError),
        description: `${self.description} Returns a short summary; the full result is kept in working memory (memory.read).`
      }
    )
  }
)

/**
 * The input of {@link memoryRead}: an id, and optionally a character range
 * (`offset`, `length`) or a line range (`line`, `lines`).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ReadInput = Schema.Struct({
  id: Schema.String,
  offset: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  length: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100_000 }))),
  line: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  lines: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10_000 })))
})

/**
 * What {@link memoryRead} returns: a part of the stored text, where it lies
 * (`start`..`end` in `unit`s, of `total`), and the call that reads on.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ReadOutput = Schema.Struct({
  id: Schema.String,
  content: Schema.String,
  unit: Schema.Literals(["chars", "lines"]),
  /** Characters: offset of the first, 0-based; lines: number of the first, 1-based. */
  start: Schema.Int,
  /** Characters: offset after the last; lines: number of the last. */
  end: Schema.Int,
  total: Schema.Int,
  hasMore: Schema.Boolean,
  next: Schema.optionalKey(Schema.String)
})

/**
 * `memory.read`: reads a result kept by {@link Summarized}, whole or in part.
 * With `line` (and `lines`, default 200) it returns lines; otherwise
 * characters from `offset` (default 0), `length` at a time (default 4,000).
 * When there is more, `next` says how to read on. An unknown id fails with
 * `MemoryNotFound`.
 *
 * **Example** (Summarize, then read the details)
 * ```ts
 * import { Tool, Trust } from "@ugent/core"
 * import { MemoryStore, Summarized } from "@ugent/wrappers"
 * import { Effect, Layer, Schema } from "effect"
 * const grep = Tool.fromFunction({
 *   name: "search.grep",
 *   input: Schema.String,
 *   output: Schema.String,
 *   f: (pattern: string) => Array.from({ length: 500 }, (_, i) => `src/f${i}.ts:1: ${pattern}`).join("\n")
 * })
 * const program = Effect.gen(function* () {
 *   const { memoryId, summary, lines } = yield* Summarized(grep).run("TODO")
 *   const part = yield* Summarized.read.run({ id: memoryId, line: 499, lines: 5 })
 *   return [summary, lines, part.content, part.hasMore]
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(Layer.merge(MemoryStore.layerMemory(), Trust.grant(0))))))
 * // => [ '500 line(s), 9889 chars. Starts: src/f0.ts:1: TODO', 500, 'src/f498.ts:1: TODO\nsrc/f499.ts:1: TODO', false ]
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const memoryRead: Tool.Tool<
  typeof ReadInput.Type,
  typeof ReadOutput.Type,
  MemoryNotFound | StoreError,
  MemoryStore | Trust.L0
> = Tool.make({
  name: "memory.read",
  description:
    "Reads a result kept in working memory by its id: the whole of it, a range of characters (offset, length) or of lines (line, lines).",
  input: ReadInput,
  output: ReadOutput,
  failure: Schema.Union([MemoryNotFound, StoreError]),
  run: (input) =>
    Effect.gen(function* () {
      const memory = yield* MemoryStore
      if (input.line !== undefined) {
        const part = yield* memory.getLines(input.id, { start: input.line, count: input.lines ?? 200 })
        return {
          id: part.id,
          content: part.content,
          unit: "lines" as const,
          start: part.start,
          end: part.end,
          total: part.lines,
          hasMore: part.hasMore,
          ...(part.hasMore ? { next: `memory.read {"id":"${part.id}","line":${part.end + 1}}` } : {})
        }
      }
      const part = yield* memory.getRange(input.id, { offset: input.offset ?? 0, length: input.length ?? 4000 })
      const end = part.offset + part.length
      return {
        id: part.id,
        content: part.content,
        unit: "chars" as const,
        start: part.offset,
        end,
        total: part.size,
        hasMore: part.hasMore,
        ...(part.hasMore ? { next: `memory.read {"id":"${part.id}","offset":${end}}` } : {})
      }
    })
})

/**
 * Summarizes a tool's results into working memory (see the module
 * documentation). The wrapped tool returns a {@link Summary} (its output
 * schema changes accordingly) and may fail with `StoreError` when the result
 * cannot be stored. Dual. The reading tool is at hand as `Summarized.read`.
 *
 * @category wrappers
 * @since 0.1.0
 */
export const Summarized: typeof summarized & { readonly read: typeof memoryRead } = Object.assign(summarized, {
  read: memoryRead
})
