/**
 * `Summarized` is working memory for a model's context: the full result of a
 * call is stored under an id in the `MemoryStore`, and only a short summary
 * (under 100 tokens, with the id and how to read the rest) goes back to the
 * caller. {@link memoryRead} (`memory.read`, served as `self.memory.read`)
 * fetches the full result, or a range of characters or lines of it, by id;
 * {@link memoryList} (`memory.list`, served as `self.memory.list`) lists the
 * caller's entries.
 *
 * Working memory is per caller: an entry is stored with the `Observer` in
 * context as its owner, `memory.list` lists only the caller's own entries,
 * and `memory.read` answers another caller's entry as it answers an unknown
 * id (`MemoryNotFound`), so the ids of others are not even confirmed. An
 * entry without an owner (stored with no `Observer` in context) can be read
 * by anyone who has its id.
 *
 * The hints in answers (`hint`, `next`) name the reading tool as the caller
 * knows it: {@link MemoryTools} holds the names (default `memory.read` and
 * `memory.list`; a server sets the paths it serves them on).
 *
 * @since 0.1.0
 */
import { Observer, Tool, type Trust } from "@ugent/core"
import { Context, Effect, Option, Schema } from "effect"
import { dual } from "effect/Function"
import { canonicalJson } from "./internal/canonical.ts"
import { jsonOf, optionEncoder } from "./internal/jsonValue.ts"
import {
  entryOf,
  linesOf,
  type MemoryEntry,
  MemoryNotFound,
  MemoryStore,
  rangeOf,
  SourceCheck,
  sourceOf
} from "./MemoryStore.ts"
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
 * The names the caller knows the memory tools by, as the hints in answers
 * spell them.
 *
 * @category models
 * @since 0.2.0
 */
export interface MemoryToolNames {
  readonly read: string
  readonly list: string
}

/**
 * The names of the memory tools in hints (default `memory.read` and
 * `memory.list`): a reference, so a server sets the paths it serves them on
 * (`self.memory.read`, `self.memory.list`) for a whole call tree.
 *
 * **Example** (Hints that name the served path)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { MemoryStore, Summarized } from "@ugent/wrappers"
 * import { Effect, Layer } from "effect"
 * const program = Effect.gen(function* () {
 *   const id = yield* (yield* MemoryStore.MemoryStore).put({ id: "m-1", tool: "t", content: "a\nb\nc", summary: "" })
 *   const part = yield* Summarized.read.run({ id, line: 1, lines: 1 })
 *   return part.next
 * })
 * const served = Effect.provideService(program, Summarized.MemoryTools, { read: "self.memory.read", list: "self.memory.list" })
 * console.log(Effect.runSync(served.pipe(Effect.provide(Layer.merge(MemoryStore.layerMemory(), Trust.grant(0))))))
 * // => self.memory.read {"id":"m-1","line":2}
 * ```
 *
 * @category references
 * @since 0.2.0
 */
export const MemoryTools = Context.Reference<MemoryToolNames>("ugent/wrappers/Summarized/MemoryTools", {
  defaultValue: () => ({ read: "memory.read", list: "memory.list" })
})

/**
 * The call that reads an entry, as a hint: the reading tool's name, then its
 * input as JSON (the id, and where to read on, if anywhere). A server that
 * serves `memory.read` under another name writes its hints with it.
 *
 * **Example** (Hints for the whole entry and for the next page)
 * ```ts
 * import { Summarized } from "@ugent/wrappers"
 * console.log(Summarized.nextHint("self.memory.read", "m-1"))
 * // => self.memory.read {"id":"m-1"}
 * console.log(Summarized.nextHint("self.memory.read", "m-1", { offset: 4000 }))
 * // => self.memory.read {"id":"m-1","offset":4000}
 * console.log(Summarized.nextHint("memory.read", "m-1", { line: 201 }))
 * // => memory.read {"id":"m-1","line":201}
 * ```
 *
 * @category hints
 * @since 0.2.0
 */
export const nextHint = (
  toolName: string,
  id: string,
  position?: { readonly offset: number } | { readonly line: number }
): string => `${toolName} ${JSON.stringify({ id, ...position })}`

/** The caller's observer id, if an `Observer` is in context. */
const callerId: Effect.Effect<string | undefined> = Effect.map(Effect.serviceOption(Observer.Observer), (observer) =>
  Option.isSome(observer) ? observer.value.id : undefined
)

/** Whether the caller may read an entry: its own, or one without an owner. */
const readableBy = (entry: MemoryEntry, caller: string | undefined): boolean =>
  entry.owner === undefined || entry.owner === caller

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
          const owner = yield* callerId
          const source = sourceOf(output)
          const memoryId = yield* memory.put({ tool: path, content, summary, owner, ...(source ? { source } : {}) })
          const names = yield* MemoryTools
          return {
            memoryId,
            summary,
            chars: stored.size,
            lines: stored.lines,
            hint: `Full result: ${nextHint(names.read, memoryId)}`
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
  next: Schema.optionalKey(Schema.String),
  /**
   * The entry was kept from a file that changed (or was deleted) since: what
   * it holds is no longer the file's content; `next` reads the file afresh.
   */
  stale: Schema.optionalKey(
    Schema.Struct({
      path: Schema.String,
      reason: Schema.Literals(["changed", "deleted"]),
      next: Schema.optionalKey(Schema.String)
    })
  )
})

/** Whether the file an entry was kept from changed since, as the host checks it (`MemoryStore.SourceCheck`). */
const staleness = (entry: MemoryEntry) =>
  Effect.gen(function* () {
    if (entry.source === undefined) return {}
    const check = yield* SourceCheck
    const found = yield* check(entry.source)
    if (found.state !== "changed" && found.state !== "deleted") return {}
    return {
      stale: {
        path: entry.source.path,
        reason: found.state,
        ...(found.next === undefined ? {} : { next: found.next })
      }
    }
  })

/**
 * `memory.read`: reads a result kept by {@link Summarized}, whole or in part.
 * With `line` (and `lines`, default 200) it returns lines; otherwise
 * characters from `offset` (default 0), `length` at a time (default 4,000).
 * When there is more, `next` says how to read on (with the name from
 * {@link MemoryTools}). An unknown id, or the id of another caller's entry,
 * fails with `MemoryNotFound`. An entry kept from a file that changed since
 * says so in `stale` (checked by `MemoryStore.SourceCheck`), with the call
 * that reads the file afresh.
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
    "Read a result kept in working memory by its id: whole, characters (offset, length) or lines (line, lines).",
  input: ReadInput,
  output: ReadOutput,
  failure: Schema.Union([MemoryNotFound, StoreError]),
  run: (input) =>
    Effect.gen(function* () {
      const entry = yield* (yield* MemoryStore).get(input.id)
      if (!readableBy(entry, yield* callerId)) return yield* Effect.fail(new MemoryNotFound({ id: input.id }))
      const { read } = yield* MemoryTools
      const stale = yield* staleness(entry)
      if (input.line !== undefined) {
        const part = linesOf(entry, input.line, input.lines ?? 200)
        return {
          id: part.id,
          content: part.content,
          unit: "lines" as const,
          start: part.start,
          end: part.end,
          total: part.lines,
          hasMore: part.hasMore,
          ...(part.hasMore ? { next: nextHint(read, part.id, { line: part.end + 1 }) } : {}),
          ...stale
        }
      }
      const part = rangeOf(entry, input.offset ?? 0, input.length ?? 4000)
      const end = part.offset + part.length
      return {
        id: part.id,
        content: part.content,
        unit: "chars" as const,
        start: part.offset,
        end,
        total: part.size,
        hasMore: part.hasMore,
        ...(part.hasMore ? { next: nextHint(read, part.id, { offset: end }) } : {}),
        ...stale
      }
    })
})

/**
 * `memory.delete`: forgets one of the caller's entries now. An unknown id, or
 * the id of another caller's entry, fails with `MemoryNotFound`.
 *
 * **Example** (Forget a result)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { MemoryStore, Summarized } from "@ugent/wrappers"
 * import { Effect, Layer } from "effect"
 * const program = Effect.gen(function* () {
 *   yield* (yield* MemoryStore.MemoryStore).put({ id: "m-1", tool: "t", content: "old", summary: "" })
 *   const done = yield* Summarized.delete.run({ id: "m-1" })
 *   const again = yield* Effect.flip(Summarized.read.run({ id: "m-1" }))
 *   return [done.deleted, again._tag]
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(Layer.merge(MemoryStore.layerMemory(), Trust.grant(0))))))
 * // => [ true, 'MemoryNotFound' ]
 * ```
 *
 * @category tools
 * @since 0.3.0
 */
export const memoryDelete: Tool.Tool<
  { readonly id: string },
  { readonly id: string; readonly deleted: true },
  MemoryNotFound | StoreError,
  MemoryStore | Trust.L0
> = Tool.make({
  name: "memory.delete",
  description: "Forget a result kept in working memory, by its id.",
  input: Schema.Struct({ id: Schema.String }),
  output: Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }),
  failure: Schema.Union([MemoryNotFound, StoreError]),
  run: (input) =>
    Effect.gen(function* () {
      const memory = yield* MemoryStore
      const entry = yield* memory.get(input.id)
      if (!readableBy(entry, yield* callerId)) return yield* Effect.fail(new MemoryNotFound({ id: input.id }))
      if (!(yield* memory.delete(input.id))) return yield* Effect.fail(new MemoryNotFound({ id: input.id }))
      return { id: input.id, deleted: true as const }
    })
})

/**
 * The input of {@link memoryList}: how many entries at most (default 20),
 * and optionally only those of one tool.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ListInput = Schema.Struct({
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 }))),
  tool: Schema.optionalKey(Schema.String)
})

/**
 * One entry as {@link memoryList} shows it: everything but its content
 * (`size` in characters, `createdAt` in epoch milliseconds).
 *
 * @category schemas
 * @since 0.2.0
 */
export const ListedEntry = Schema.Struct({
  id: Schema.String,
  tool: Schema.String,
  summary: Schema.String,
  size: Schema.Int,
  lines: Schema.Int,
  createdAt: Schema.Number,
  /** When it is forgotten (epoch milliseconds). */
  expiresAt: Schema.optionalKey(Schema.Number),
  /** The file it was kept from (a read after the file changed says so). */
  source: Schema.optionalKey(Schema.String)
})

/**
 * What {@link memoryList} returns: the caller's entries, newest first, and
 * whether there are more than the limit.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ListOutput = Schema.Struct({
  entries: Schema.Array(ListedEntry),
  hasMore: Schema.Boolean
})

/**
 * `memory.list`: the caller's own entries in working memory, newest first
 * (at most `limit`, default 20), with their id, tool, summary, size, lines
 * and time. The caller is the `Observer` in context; without one, the
 * entries that have no owner.
 *
 * **Example** (Each caller lists its own results)
 * ```ts
 * import { Observer, Tool, Trust } from "@ugent/core"
 * import { MemoryStore, Summarized } from "@ugent/wrappers"
 * import { Effect, Layer, Schema } from "effect"
 * const log = Summarized(Tool.fromFunction({ name: "git.log", input: Schema.Number, output: Schema.String, f: (n: number) => `${n} commits` }))
 * const as = (id: string) => Effect.provide(Observer.layer({ id, trust: 0 }))
 * const program = Effect.gen(function* () {
 *   yield* log.run(3).pipe(as("alice"))
 *   yield* log.run(5).pipe(as("bob"))
 *   const { entries } = yield* Summarized.list.run({}).pipe(as("alice"))
 *   return entries.map((e) => [e.tool, e.summary, e.lines])
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(Layer.merge(MemoryStore.layerMemory(), Trust.grant(0))))))
 * // => [ [ 'git.log', '1 line(s), 9 chars. Starts: 3 commits', 1 ] ]
 * ```
 *
 * @category tools
 * @since 0.2.0
 */
export const memoryList: Tool.Tool<typeof ListInput.Type, typeof ListOutput.Type, StoreError, MemoryStore | Trust.L0> =
  Tool.make({
    name: "memory.list",
    description: "List your results kept in working memory, newest first: id, tool, summary, size, when stored.",
    input: ListInput,
    output: ListOutput,
    failure: StoreError,
    run: (input) =>
      Effect.gen(function* () {
        const limit = input.limit ?? 20
        const owner = (yield* callerId) ?? null
        const found = yield* (yield* MemoryStore).list({ owner, limit: limit + 1, tool: input.tool })
        return {
          entries: found.slice(0, limit).map(({ id, tool, summary, size, lines, createdAt, expiresAt, source }) => ({
            id,
            tool,
            summary,
            size,
            lines,
            createdAt,
            ...(expiresAt === undefined ? {} : { expiresAt }),
            ...(source === undefined ? {} : { source: source.path })
          })),
          hasMore: found.length > limit
        }
      })
  })

/**
 * Summarizes a tool's results into working memory (see the module
 * documentation). The wrapped tool returns a {@link Summary} (its output
 * schema changes accordingly) and may fail with `StoreError` when the result
 * cannot be stored. Dual. At hand: `Summarized.read` (`memory.read`),
 * `Summarized.list` (`memory.list`), `Summarized.delete` (`memory.delete`),
 * `Summarized.MemoryTools` (the names in hints) and `Summarized.nextHint`.
 *
 * @category wrappers
 * @since 0.1.0
 */
export const Summarized: typeof summarized & {
  readonly read: typeof memoryRead
  readonly list: typeof memoryList
  readonly delete: typeof memoryDelete
  readonly MemoryTools: typeof MemoryTools
  readonly nextHint: typeof nextHint
} = Object.assign(summarized, { read: memoryRead, list: memoryList, delete: memoryDelete, MemoryTools, nextHint })
