/**
 * The result budget bounds what one call puts into a model's context. A
 * result larger than the budget (about 25,000 estimated tokens by default,
 * tokens being characters / 4, the limit the best-known MCP client applies)
 * is kept in working memory, and the caller gets an {@link OverBudget}
 * instead: a one-sentence summary in the design documents' formats (`Read
 * 2000 lines from big.txt`, `Found 47 matches in 12 files`), the result's
 * size, the memory id, and how to read on: with the tool's own paging when
 * it has one (`file.read` offset and limit), else `self.memory.read`.
 *
 * @since 0.2.0
 */
import { type Family, ReadProof } from "@ugent/core"
import type { MemoryStore } from "@ugent/wrappers"
import { Effect, Schema } from "effect"

/**
 * What a caller gets in place of a result over the budget.
 *
 * @category schemas
 * @since 0.2.0
 */
export const OverBudget = Schema.Struct({
  overBudget: Schema.Literal(true),
  /** What the result was, in a sentence. */
  summary: Schema.String,
  estimatedTokens: Schema.Int,
  budgetTokens: Schema.Int,
  /** The size of the text kept in memory. */
  chars: Schema.Int,
  lines: Schema.Int,
  /** Where the full result is kept: pass it to self.memory.read. */
  memoryId: Schema.String,
  /** How to get the rest: the tool's own paging, or self.memory.read. */
  next: Schema.String
}).annotate({
  title: "OverBudget",
  description:
    "The result was larger than the caller's budget, so it was kept in working memory: read it in parts with self.memory.read, or ask for less."
})

/**
 * @category models
 * @since 0.2.0
 */
export type OverBudget = typeof OverBudget.Type

/**
 * The estimated size in tokens of a text: characters / 4, rounded up.
 *
 * @category measuring
 * @since 0.2.0
 */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

const proofToken = /^rp1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/** Proof tokens are never kept in memory: a caller that was not shown the text has no proof of it. */
const withoutProofs = (value: unknown): unknown => {
  if (typeof value === "string")
    return proofToken.test(value) ? "(withheld: read within the budget for a proof)" : value
  if (Array.isArray(value)) return value.map(withoutProofs)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutProofs(v)]))
  }
  return value
}

/**
 * The text kept for a result: its main text when one string field makes up
 * most of it (a file's content, a diff), so lines page naturally; otherwise
 * its JSON, indented, one field per line.
 */
const keptText = (encoded: unknown, printed: string): { readonly text: string; readonly field: string | undefined } => {
  if (typeof encoded === "string") return { text: encoded, field: undefined }
  const clean = withoutProofs(encoded)
  if (typeof clean === "object" && clean !== null && !Array.isArray(clean)) {
    // The size of the printed result decides (a withheld token changes it by a few characters only).
    const total = printed.length
    for (const [k, v] of Object.entries(clean)) {
      if (typeof v === "string" && v.length * 2 > total) return { text: v, field: k }
    }
  }
  return { text: JSON.stringify(clean, null, 2), field: undefined }
}

/** The number of lines of a non-empty text (newlines + 1), without splitting it. */
const lineCount = (text: string): number => {
  let count = 1
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++
  return count
}

const describeShape = (encoded: unknown): string => {
  if (Array.isArray(encoded)) return `${encoded.length} item(s)`
  if (typeof encoded === "object" && encoded !== null) {
    const parts = Object.entries(encoded).flatMap(([k, v]) =>
      Array.isArray(v) ? [`${v.length} ${k}`] : typeof v === "number" || typeof v === "boolean" ? [`${k} ${v}`] : []
    )
    return parts.length > 0 ? parts.slice(0, 6).join(", ") : `fields ${Object.keys(encoded).slice(0, 6).join(", ")}`
  }
  return typeof encoded
}

/**
 * Applies the budget to an encoded result: `undefined` when it fits,
 * otherwise the result is kept in working memory under the caller and the
 * {@link OverBudget} to return instead. The id of a kept text comes from the
 * caller, the path and the text, so the same result kept again is the same
 * entry, not another copy.
 *
 * **Example** (A result over a small budget)
 * ```ts
 * import { Budget } from "@ugent/agentese"
 * import { MemoryStore } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const big = { content: "x\n".repeat(1000), totalLines: 1000 }
 * const program = Effect.gen(function* () {
 *   const memory = yield* MemoryStore.MemoryStore
 *   return yield* Budget.apply({ path: "world.tools.file.read", encoded: big, text: JSON.stringify(big), budgetTokens: 100, memory, present: { summary: "Read 1000 lines from a.txt" } })
 * })
 * const over = Effect.runSync(program.pipe(Effect.provide(MemoryStore.layerMemory())))
 * console.log(over?.summary, over?.lines, over?.next.includes("self.memory.read"))
 * // => Read 1000 lines from a.txt (its content is kept in memory) 1001 true
 * ```
 *
 * @category budget
 * @since 0.2.0
 */
export const apply = (options: {
  readonly path: string
  readonly encoded: unknown
  /** The result as the caller would read it (its JSON). */
  readonly text: string
  readonly budgetTokens: number
  readonly memory: MemoryStore.MemoryStoreShape
  readonly present?: Family.Presentation | undefined
  readonly owner?: string | undefined
  /** The file the result shows (its path and hash), kept with it so a later read can tell the file changed. */
  readonly source?: { readonly path: string; readonly hash: string } | undefined
}): Effect.Effect<OverBudget | undefined, unknown> => {
  const estimatedTokens = estimateTokens(options.text)
  if (estimatedTokens <= options.budgetTokens) return Effect.succeed(undefined)
  const kept = keptText(options.encoded, options.text)
  const what = options.present?.summary ?? `${options.path} returned ${describeShape(options.encoded)}`
  const summary = kept.field === undefined ? what : `${what} (its ${kept.field} is kept in memory)`
  const put = {
    tool: options.path,
    content: kept.text,
    summary,
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    ...(options.source !== undefined ? { source: options.source } : {})
  }
  // The same text kept again for the same caller and path is the same entry: an agent re-reading a large
  // file does not store it again (working memory keeps what it is given until it is deleted).
  const id = `m-${ReadProof.hash(`${options.owner ?? ""}\u0000${options.path}\u0000${kept.text}`).slice(0, 24)}`
  const stored = options.memory.info(id).pipe(
    Effect.map((info) => info.size === kept.text.length && info.summary === summary),
    Effect.catch(() => Effect.succeed(false))
  )
  const keep = Effect.flatMap(stored, (known) => (known ? Effect.succeed(id) : options.memory.put({ ...put, id })))
  return Effect.map(keep, (memoryId) => {
    const lines = kept.text.length === 0 ? 0 : lineCount(kept.text)
    const pageLines = Math.max(
      1,
      Math.floor((options.budgetTokens * 4) / Math.max(1, kept.text.length / Math.max(1, lines)) / 2)
    )
    const memoryHint = `self.memory.read {"id":"${memoryId}","line":1,"lines":${Math.min(lines, pageLines)}}`
    return {
      overBudget: true as const,
      summary,
      estimatedTokens,
      budgetTokens: options.budgetTokens,
      chars: kept.text.length,
      lines,
      memoryId,
      next:
        options.present?.next === undefined
          ? `Read it in parts: ${memoryHint}.`
          : `${options.present.next}; or read the kept text in parts: ${memoryHint}.`
    }
  })
}
