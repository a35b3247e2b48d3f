/**
 * The result budget bounds what one call puts into a model's context. A
 * result larger than the budget is kept in working memory, and the caller
 * gets an {@link OverBudget} instead: a one-sentence summary in the design
 * documents' formats (`Read 2000 lines from big.txt`, `Found 47 matches in
 * 12 files`), the result's size, the memory id, and how to read on: with the
 * tool's own paging when it has one (`file.read` offset and limit), else
 * `self.memory.read`, in pages that fit the same budget.
 *
 * A budget is a {@link Limit}: what one client passes to its model whole,
 * measured as that client measures (characters, bytes, the bytes of the
 * content as JSON, lines). On MCP the default is the limit of the client
 * that names itself at `initialize` ({@link clients}), and for a client not
 * known here the {@link strictest} of them all; elsewhere (the HTTP API, the
 * CLI, an agent loop) and wherever a recipe (`resultBudgetTokens`) or the
 * host (`--budget`) sets one, it is that many estimated tokens (characters /
 * 4; 25,000 by default).
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

/**
 * What a client passes to its model whole: every bound it gives holds.
 * `chars` counts the text's UTF-16 code units (JavaScript's `length`),
 * `bytes` its UTF-8 bytes, `jsonBytes` the UTF-8 bytes of the call's content
 * list printed as JSON (what a client that hands its model the raw content
 * counts), and `lines` its lines.
 *
 * @category models
 * @since 0.2.0
 */
export interface Limit {
  readonly chars?: number | undefined
  readonly bytes?: number | undefined
  readonly jsonBytes?: number | undefined
  readonly lines?: number | undefined
}

/**
 * An MCP client this server knows, by the name it gives at `initialize`
 * (`clientInfo.name`), and what it passes to its model whole.
 *
 * @category models
 * @since 0.2.0
 */
export interface Client {
  /** Its `clientInfo.name`. */
  readonly name: string
  /** What people call it. */
  readonly title: string
  readonly limit: Limit
  /** What it does with a larger result (for the documentation). */
  readonly beyond: string
  /** Whether it hands its model the structured content (as JSON) in place of the text. */
  readonly readsStructured: boolean
  /** Whether it hands its model a failed call's whole result as JSON (its `_meta` too). */
  readonly readsRawErrors: boolean
  /** The name it lists a server's tool under, given the name the server is configured with. */
  readonly listedAs: (server: string, tool: string) => string
}

/**
 * The clients measured, each with what it passes whole, as the real clients
 * were seen to pass results to a scripted model (`scripts/clients/`): Claude
 * Code 2.1, Codex CLI 0.171 (a model of a custom provider, which Codex cuts
 * at about 12,000 bytes; its own models at 10,000 tokens), Gemini CLI 0.61,
 * opencode 1.18.
 *
 * @category constants
 * @since 0.2.0
 */
export const clients: ReadonlyArray<Client> = [
  {
    name: "claude-code",
    title: "Claude Code",
    limit: { chars: 50_000 },
    beyond: "saved to a file outside the workspace; the model sees a 2 KB preview",
    readsStructured: true,
    readsRawErrors: false,
    listedAs: (server, tool) => `mcp__${server}__${tool}`
  },
  {
    name: "codex-mcp-client",
    title: "OpenAI Codex CLI",
    limit: { bytes: 11_000 },
    beyond: "about 12,000 bytes kept (10,000 tokens for OpenAI's own models), head and tail, the middle cut",
    readsStructured: true,
    readsRawErrors: false,
    // Listed in a namespace (`mcp__ugent`) under the tool's own name.
    listedAs: (_server, tool) => tool
  },
  {
    name: "gemini-cli-mcp-client",
    title: "Gemini CLI",
    limit: { chars: 40_000 },
    beyond: "the first 8,000 and the last 32,000 characters kept",
    readsStructured: false,
    readsRawErrors: true,
    listedAs: (server, tool) => `mcp_${server}_${tool}`
  },
  {
    name: "opencode",
    title: "opencode",
    limit: { bytes: 51_200, lines: 2_000 },
    beyond: "cut at 50 KB or 2,000 lines, whole lines only",
    readsStructured: false,
    readsRawErrors: false,
    listedAs: (server, tool) => `${server}_${tool}`
  }
]

const tightest = (limits: ReadonlyArray<Limit>): Limit => {
  const min = (pick: (l: Limit) => number | undefined) => {
    const values = limits.map(pick).filter((v): v is number => v !== undefined)
    return values.length === 0 ? undefined : Math.min(...values)
  }
  const bounds = {
    chars: min((l) => l.chars),
    bytes: min((l) => l.bytes),
    jsonBytes: min((l) => l.jsonBytes),
    lines: min((l) => l.lines)
  }
  return Object.fromEntries(Object.entries(bounds).filter(([, v]) => v !== undefined))
}

/**
 * What every known client passes whole: the budget of a client this server
 * does not know.
 *
 * **Example** (The strictest client's bounds)
 * ```ts
 * import { Budget } from "@ugent/agentese"
 * console.log(Budget.strictest)
 * // => { chars: 40000, bytes: 11000, lines: 2000 }
 * ```
 *
 * @category constants
 * @since 0.2.0
 */
export const strictest: Limit = tightest(clients.map((c) => c.limit))

/**
 * The known client of a `clientInfo.name` (compared without case), if any.
 *
 * @category budget
 * @since 0.2.0
 */
export const clientNamed = (name: string | undefined): Client | undefined => {
  const wanted = name?.trim().toLowerCase()
  return wanted === undefined ? undefined : clients.find((c) => c.name === wanted)
}

/**
 * The budget of a client by its `clientInfo.name`: its own limit when known,
 * else {@link strictest}.
 *
 * **Example** (A known client and an unknown one)
 * ```ts
 * import { Budget } from "@ugent/agentese"
 * console.log(Budget.forClient("claude-code"), Budget.forClient("my-editor") === Budget.strictest)
 * // => { chars: 50000 } true
 * ```
 *
 * @category budget
 * @since 0.2.0
 */
export const forClient = (name: string | undefined): Limit => clientNamed(name)?.limit ?? strictest

/**
 * The name a client lists a server's tool under: a known client's own
 * scheme, given the name the server is configured with in it (`ugent` in
 * every configuration the README gives); the tool's name for any other.
 *
 * **Example** (A hint in the name Claude Code lists)
 * ```ts
 * import { Budget } from "@ugent/agentese"
 * console.log(Budget.listedName("claude-code", "ugent", "self_memory_read"), Budget.listedName("my-editor", "ugent", "self_memory_read"))
 * // => mcp__ugent__self_memory_read self_memory_read
 * ```
 *
 * @category budget
 * @since 0.2.0
 */
export const listedName = (client: string | undefined, server: string, tool: string): string =>
  clientNamed(client)?.listedAs(server, tool) ?? tool

/**
 * A budget of estimated tokens (characters / 4), as a recipe's
 * `resultBudgetTokens` and the `--budget` flag set it.
 *
 * @category budget
 * @since 0.2.0
 */
export const tokens = (budgetTokens: number): Limit => ({ chars: budgetTokens * 4 })

/** The bytes of a text in a content list printed as JSON, as a client that hands over the raw content counts them. */
const contentJsonBytes = (text: string): number => Buffer.byteLength(JSON.stringify([{ type: "text", text }]))

/** The number of lines of a text as a client that splits it at newlines counts them (newlines + 1). */
const linesIn = (text: string): number => (text === "" ? 0 : lineCount(text))

/**
 * How far over a limit a text is: the largest of its measures divided by
 * the limit's bound (at most 1 when it fits).
 *
 * @category measuring
 * @since 0.2.0
 */
export const ratio = (limit: Limit, text: string): number => {
  let worst = 0
  if (limit.chars !== undefined) worst = Math.max(worst, text.length / limit.chars)
  if (limit.lines !== undefined) worst = Math.max(worst, linesIn(text) / limit.lines)
  if (limit.bytes !== undefined) worst = Math.max(worst, Buffer.byteLength(text) / limit.bytes)
  if (limit.jsonBytes !== undefined) worst = Math.max(worst, contentJsonBytes(text) / limit.jsonBytes)
  return worst
}

/**
 * A budget shared by `n` texts shown together (a fan-out's results): each
 * bound divided among them.
 *
 * @category budgets
 * @since 0.2.0
 */
export const share = (limit: Limit, n: number): Limit => {
  const part = (v: number | undefined) => (v === undefined ? undefined : Math.max(1, Math.floor(v / Math.max(1, n))))
  return {
    chars: part(limit.chars),
    bytes: part(limit.bytes),
    jsonBytes: part(limit.jsonBytes),
    lines: part(limit.lines)
  }
}

/**
 * Whether a text is within a limit (every bound holds).
 *
 * **Example** (Lines count for opencode, bytes of JSON for Codex)
 * ```ts
 * import { Budget } from "@ugent/agentese"
 * const lines = "x\n".repeat(2500)
 * console.log(Budget.fits(Budget.forClient("opencode"), lines), Budget.fits(Budget.forClient("claude-code"), lines))
 * // => false true
 * ```
 *
 * @category measuring
 * @since 0.2.0
 */
export const fits = (limit: Limit, text: string): boolean => {
  // Cheap bounds first: a text's UTF-8 bytes, and its JSON's, are never fewer than its UTF-16 code units,
  // and never more than 6 per unit (a `\uXXXX` escape); a text has at most one line per unit, and one more.
  const n = text.length
  if (limit.chars !== undefined && n > limit.chars) return false
  if (limit.bytes !== undefined && n > limit.bytes) return false
  if (limit.jsonBytes !== undefined && n > limit.jsonBytes) return false
  if (
    (limit.bytes === undefined || 3 * n <= limit.bytes) &&
    (limit.jsonBytes === undefined || 6 * n + 32 <= limit.jsonBytes) &&
    (limit.lines === undefined || n < limit.lines)
  ) {
    return true
  }
  // The costlier measures last, each only if the ones before hold.
  if (limit.lines !== undefined && linesIn(text) > limit.lines) return false
  if (limit.bytes !== undefined && Buffer.byteLength(text) > limit.bytes) return false
  return limit.jsonBytes === undefined || contentJsonBytes(text) <= limit.jsonBytes
}

/**
 * A limit as estimated tokens (its smallest size bound / 4), for messages
 * and `OverBudget.budgetTokens`.
 *
 * @category measuring
 * @since 0.2.0
 */
export const tokensOf = (limit: Limit): number => {
  const sizes = [limit.chars, limit.bytes, limit.jsonBytes].filter((v): v is number => v !== undefined)
  return sizes.length === 0 ? Number.MAX_SAFE_INTEGER : Math.floor(Math.min(...sizes) / 4)
}

/**
 * A limit in words, for the documentation and the start-up line.
 *
 * **Example** (The strictest client's bounds in words)
 * ```ts
 * import { Budget } from "@ugent/agentese"
 * console.log(Budget.describe(Budget.strictest))
 * // => 40,000 characters, 11,000 bytes, 2,000 lines
 * ```
 *
 * @category describing
 * @since 0.2.0
 */
export const describe = (limit: Limit): string => {
  const n = (v: number) => v.toLocaleString("en-US")
  const parts = [
    limit.chars === undefined ? undefined : `${n(limit.chars)} characters`,
    limit.bytes === undefined ? undefined : `${n(limit.bytes)} bytes`,
    limit.jsonBytes === undefined ? undefined : `${n(limit.jsonBytes)} bytes as JSON`,
    limit.lines === undefined ? undefined : `${n(limit.lines)} lines`
  ].filter((p): p is string => p !== undefined)
  return parts.length === 0 ? "no limit" : parts.join(", ")
}

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

/**
 * A result in a sentence, for the audit and the event stream: the family's
 * own (`Read 120 lines from src/a.ts`), else what the result holds
 * (`world.tools.git.log returned 3 commits`).
 *
 * **Example** (With and without the family's sentence)
 * ```ts
 * import { Budget } from "@ugent/agentese"
 * console.log(Budget.sentence("world.tools.git.log", { commits: [1, 2, 3] }))
 * // => world.tools.git.log returned 3 commits
 * console.log(Budget.sentence("world.tools.file.read", {}, { summary: "Read 2 lines from a.txt" }))
 * // => Read 2 lines from a.txt
 * ```
 *
 * @category summaries
 * @since 0.2.0
 */
export const sentence = (path: string, encoded: unknown, present?: Family.Presentation | undefined): string =>
  present?.summary ?? `${path} returned ${describeShape(encoded)}`

/**
 * A size for a person: `512 B`, `1.2 KB`, `3.4 MB`.
 *
 * **Example** (Sizes)
 * ```ts
 * import { Budget } from "@ugent/agentese"
 * console.log([Budget.size(512), Budget.size(1229), Budget.size(3_565_158)])
 * // => [ '512 B', '1.2 KB', '3.4 MB' ]
 * ```
 *
 * @category summaries
 * @since 0.2.0
 */
export const size = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / (1024 * 1024)).toFixed(1)} MB`

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
  /** The result as the caller would read it (its JSON, or the text made for its model). */
  readonly text: string
  /** The budget in estimated tokens (used when no `limit` is given). */
  readonly budgetTokens?: number | undefined
  /** The budget as a client's limit. */
  readonly limit?: Limit | undefined
  /** The text to keep (default: the result's main text field, or its JSON indented). */
  readonly kept?: string | undefined
  readonly memory: MemoryStore.MemoryStoreShape
  readonly present?: Family.Presentation | undefined
  readonly owner?: string | undefined
  /** The file the result shows (its path and hash), kept with it so a later read can tell the file changed. */
  readonly source?: { readonly path: string; readonly hash: string } | undefined
}): Effect.Effect<OverBudget | undefined, unknown> => {
  const limit = options.limit ?? tokens(options.budgetTokens ?? 25_000)
  if (fits(limit, options.text)) return Effect.succeed(undefined)
  const estimatedTokens = estimateTokens(options.text)
  const kept =
    options.kept === undefined
      ? keptText(options.encoded, options.text)
      : { text: options.kept, field: undefined as string | undefined }
  const what = sentence(options.path, options.encoded, options.present)
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
    const memoryHint = `${memoryRead} {"id":"${memoryId}","line":1,"lines":${pageLines(limit, kept.text, lines)}}`
    return {
      overBudget: true as const,
      summary,
      estimatedTokens,
      budgetTokens: tokensOf(limit),
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

/**
 * The path working memory is read on, as hints name it.
 *
 * @category constants
 * @since 0.2.0
 */
export const memoryRead = "self.memory.read"

/**
 * Lines per page of a kept text so that a page fits the limit: the text cut
 * into as many pages as it is over, with a fifth to spare for uneven lines
 * and the page's header.
 */
const pageLines = (limit: Limit, text: string, lines: number): number => {
  if (lines <= 1) return Math.max(lines, 1)
  // Measured on a sample (its own lines counted in proportion): the page is cut to fit anyway when read.
  const sample = text.length <= 32_768 ? text : text.slice(0, 32_768)
  const scale = text.length / sample.length
  const sampled = ratio({ ...limit, lines: undefined }, sample) * scale
  const pages = Math.max(1, Math.max(sampled, limit.lines === undefined ? 0 : lines / limit.lines) / 0.8)
  const cap = limit.lines === undefined ? lines : Math.floor(limit.lines * 0.8)
  return Math.max(1, Math.min(lines, cap, Math.floor(lines / pages)))
}

/**
 * A page of working memory as `self.memory.read` returns it.
 *
 * @category models
 * @since 0.2.0
 */
export interface Page {
  readonly id: string
  readonly content: string
  readonly unit: "chars" | "lines"
  readonly start: number
  readonly end: number
  readonly total: number
  readonly hasMore: boolean
  readonly next?: string | undefined
}

const isPage = (u: unknown): u is Page => {
  if (typeof u !== "object" || u === null) return false
  const p = u as Record<string, unknown>
  return (
    typeof p.id === "string" &&
    typeof p.content === "string" &&
    (p.unit === "chars" || p.unit === "lines") &&
    typeof p.start === "number" &&
    typeof p.end === "number" &&
    typeof p.total === "number"
  )
}

/** The largest count in [1, most] for which `ok` holds (it holds for smaller ones too), or 0. */
const largest = (most: number, ok: (n: number) => boolean): number => {
  let low = 0
  let high = most
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    if (ok(mid)) low = mid
    else high = mid - 1
  }
  return low
}

/**
 * A page of working memory cut to fit a limit, as the caller's `render`
 * prints it: the page's first lines (or characters) that fit, and `next`
 * where to read on. A single line longer than a page is cut by characters
 * (`locate` gives where that line starts in the kept text, and its size). A page that
 * fits, or that is not a page, comes back as it is.
 *
 * @category budget
 * @since 0.2.0
 */
export const fitPage = <E>(
  page: unknown,
  limit: Limit,
  render: (page: Page) => string,
  locate: (line: number) => Effect.Effect<{ readonly offset: number; readonly size: number }, E>
): Effect.Effect<unknown, E> => {
  if (!isPage(page) || fits(limit, render(page))) return Effect.succeed(page)
  const hint = (position: { readonly offset: number } | { readonly line: number }) =>
    `${memoryRead} ${JSON.stringify({ id: page.id, ...position })}`
  if (page.unit === "lines") {
    const lines = page.content.split("\n")
    const withLines = (n: number): Page => ({
      ...page,
      content: lines.slice(0, n).join("\n"),
      end: page.start + n - 1,
      hasMore: true,
      next: hint({ line: page.start + n })
    })
    const n = largest(lines.length, (k) => fits(limit, render(withLines(k))))
    if (n > 0) return Effect.succeed(withLines(n))
    // One line is larger than a page: read it by characters.
    return Effect.map(locate(page.start), ({ offset, size }) => {
      const first = lines[0] ?? ""
      const withChars = (k: number): Page => ({
        id: page.id,
        content: first.slice(0, k),
        unit: "chars",
        start: offset,
        end: offset + k,
        total: size,
        hasMore: true,
        next: hint({ offset: offset + k })
      })
      return withChars(
        Math.max(
          1,
          largest(first.length, (k) => fits(limit, render(withChars(k))))
        )
      )
    })
  }
  const withChars = (k: number): Page => ({
    ...page,
    content: page.content.slice(0, k),
    end: page.start + k,
    hasMore: true,
    next: hint({ offset: page.start + k })
  })
  return Effect.succeed(
    withChars(
      Math.max(
        1,
        largest(page.content.length, (k) => fits(limit, render(withChars(k))))
      )
    )
  )
}
