/**
 * The `MemoryStore` is the working memory of `Summarized`: a tool's full
 * result is stored under an id and a short summary goes back to the model,
 * which reads details later by character range or by lines
 * (`self.memory.read`). Entries report their size in characters and lines.
 *
 * Content is text; a JSON result is kept as its indented JSON text (kind
 * `"json"`), so ranges and lines cut it the same way on every backend.
 *
 * Working memory is per caller: an entry may name its `owner` (the
 * observer's id; `Summarized` records it), and `list` filters by owner, so
 * each caller sees its own entries.
 *
 * Working memory forgets ({@link MemoryPolicy}): an entry expires a time to
 * live after it was stored (24 hours by default), and when one owner's
 * entries pass a size cap (16 million characters by default) the least
 * recently used (stored or read) are deleted first. An entry kept from a file
 * names the file and its hash then (`source`), so a reader can tell when the
 * file changed since ({@link SourceCheck}).
 *
 * @since 0.1.0
 */
import { ReadProof, type ToolError } from "@ugent/core"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as model from "./internal/memoryModel.ts"
import { MemoryEntry, MemoryInfo } from "./internal/memoryModel.ts"
import { countLines, sliceChars, sliceLines } from "./internal/memoryText.ts"
import * as databases from "./internal/sql/databases.ts"
import type { PgOptions, SqliteOptions } from "./internal/sql/databases.ts"
import * as sqlStore from "./internal/sql/memoryStore.ts"
import type { StoreError } from "./StoreError.ts"

/**
 * Whether the stored content was given as text or as JSON.
 *
 * @category schemas
 * @since 0.1.0
 */
export { MemoryKind } from "./internal/memoryModel.ts"

/**
 * What is known of an entry without reading its content. `size` counts
 * characters as JavaScript does (`String.length`); `lines` does not count a
 * final newline as the start of a line. `createdAt` is epoch milliseconds.
 * `owner` is the observer the entry belongs to (absent: no one in
 * particular).
 *
 * @category schemas
 * @since 0.1.0
 */
export { MemoryInfo } from "./internal/memoryModel.ts"

/**
 * An entry with its full content.
 *
 * @category schemas
 * @since 0.1.0
 */
export { MemoryEntry } from "./internal/memoryModel.ts"

/**
 * A character range of an entry: `content` is `length` characters from
 * `offset` (both clamped to the entry), `size` the entry's total.
 *
 * @category schemas
 * @since 0.1.0
 */
export const MemoryRange = Schema.Struct({
  id: Schema.String,
  content: Schema.String,
  offset: Schema.Int,
  length: Schema.Int,
  size: Schema.Int,
  hasMore: Schema.Boolean
})

/**
 * @category models
 * @since 0.1.0
 */
export type MemoryRange = typeof MemoryRange.Type

/**
 * Lines `start..end` (1-based, inclusive) of an entry of `lines` lines,
 * joined by newlines.
 *
 * @category schemas
 * @since 0.1.0
 */
export const MemoryLines = Schema.Struct({
  id: Schema.String,
  content: Schema.String,
  start: Schema.Int,
  end: Schema.Int,
  lines: Schema.Int,
  hasMore: Schema.Boolean
})

/**
 * @category models
 * @since 0.1.0
 */
export type MemoryLines = typeof MemoryLines.Type

/**
 * What {@link MemoryStoreShape.put} takes: a string is stored as text, any
 * other JSON value as its indented JSON text. Without an id the store makes
 * one; with the id of a stored entry, the entry is replaced.
 *
 * @category models
 * @since 0.1.0
 */
export interface PutInput {
  readonly id?: string | undefined
  readonly tool: string
  readonly content: Schema.Json
  readonly summary: string
  /** The observer the entry belongs to (default: no one in particular). */
  readonly owner?: string | undefined
  /** The file the content was kept from and its SHA-256 then. */
  readonly source?: { readonly path: string; readonly hash: string } | undefined
}

/**
 * How working memory forgets: an entry expires `ttl` after it is stored
 * (default 24 hours; `Duration.infinity`: never), and past `maxCharsPerOwner`
 * characters of one owner's entries (default 16,000,000) the least recently
 * used of them are deleted first (never the entry just stored).
 *
 * @category models
 * @since 0.3.0
 */
export interface MemoryPolicy {
  readonly ttl?: Duration.Input | undefined
  readonly maxCharsPerOwner?: number | undefined
}

/**
 * The default policy: 24 hours, 16,000,000 characters per owner.
 *
 * @category constants
 * @since 0.3.0
 */
export const defaultPolicy: { readonly ttl: Duration.Duration; readonly maxCharsPerOwner: number } = {
  ttl: Duration.hours(24),
  maxCharsPerOwner: 16_000_000
}

/**
 * What is known of a file an entry was kept from, now: `unchanged`,
 * `changed` or `deleted` since (with `next`, the call that reads it afresh),
 * or `unknown` (nothing can look).
 *
 * @category models
 * @since 0.3.0
 */
export interface SourceState {
  readonly state: "unchanged" | "changed" | "deleted" | "unknown"
  readonly next?: string | undefined
}

/**
 * How a reader of working memory checks the file an entry was kept from: a
 * reference, so the host that serves the memory tools (which has the
 * workspace) sets it; by default nothing is checked (`unknown`).
 *
 * @category references
 * @since 0.3.0
 */
export const SourceCheck = Context.Reference<
  (source: { readonly path: string; readonly hash: string }) => Effect.Effect<SourceState>
>("ugent/wrappers/MemoryStore/SourceCheck", { defaultValue: () => () => Effect.succeed({ state: "unknown" }) })

/**
 * What {@link MemoryStoreShape.list} takes: at most `limit` entries,
 * optionally only those filed under `tool`, and only those of `owner` (an
 * observer's id; `null`: only entries without an owner; absent: every
 * entry).
 *
 * @category models
 * @since 0.2.0
 */
export type { MemoryListQuery } from "./internal/memoryModel.ts"

/**
 * No entry is stored under this id, or none that the caller may read
 * (`memory.read` says the same of another caller's entry, so ids of others
 * are not even confirmed).
 *
 * **Example** (Reading the message)
 * ```ts
 * import { MemoryStore } from "@ugent/wrappers"
 * console.log(new MemoryStore.MemoryNotFound({ id: "m-1" }).message)
 * // => No working-memory entry with id m-1: it was never stored, has been deleted or forgotten (expired, or pushed out by newer ones), or belongs to another caller. List your entries with self.memory.list to see the ids you can read.
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class MemoryNotFound extends Schema.TaggedError<MemoryNotFound>()("MemoryNotFound", { id: Schema.String }) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    return `No working-memory entry with id ${this.id}: it was never stored, has been deleted or forgotten (expired, or pushed out by newer ones), or belongs to another caller. List your entries with self.memory.list to see the ids you can read.`
  }
}

/**
 * The operations of a memory store. `list` comes back newest first (by
 * `createdAt`, then `id`).
 *
 * @category models
 * @since 0.1.0
 */
export interface MemoryStoreShape {
  /** Stores an entry and returns its id. */
  readonly put: (input: PutInput) => Effect.Effect<string, StoreError>
  readonly get: (id: string) => Effect.Effect<MemoryEntry, MemoryNotFound | StoreError>
  readonly info: (id: string) => Effect.Effect<MemoryInfo, MemoryNotFound | StoreError>
  /** Characters `[offset, offset + length)`. */
  readonly getRange: (
    id: string,
    range: { readonly offset: number; readonly length: number }
  ) => Effect.Effect<MemoryRange, MemoryNotFound | StoreError>
  /** `count` lines from line `start` (1-based). */
  readonly getLines: (
    id: string,
    lines: { readonly start: number; readonly count: number }
  ) => Effect.Effect<MemoryLines, MemoryNotFound | StoreError>
  /** Whether there was an entry to delete. */
  readonly delete: (id: string) => Effect.Effect<boolean, StoreError>
  readonly list: (query: model.MemoryListQuery) => Effect.Effect<ReadonlyArray<MemoryInfo>, StoreError>
}

/**
 * The memory store service.
 *
 * **Example** (Storing a result and reading lines of it)
 * ```ts
 * import { MemoryStore } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   const memory = yield* MemoryStore.MemoryStore
 *   const id = yield* memory.put({ id: "grep-1", tool: "search.grep", content: "a.ts:1\nb.ts:7\nc.ts:9\n", summary: "3 matches" })
 *   const info = yield* memory.info(id)
 *   const lines = yield* memory.getLines(id, { start: 2, count: 1 })
 *   return [info.size, info.lines, lines.content, lines.hasMore]
 * })
 * console.log(Effect.runSync(Effect.provide(program, MemoryStore.layerMemory())))
 * // => [ 21, 3, 'b.ts:7', true ]
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export class MemoryStore extends Context.Service<MemoryStore, MemoryStoreShape>()("ugent/MemoryStore") {}

/**
 * Builds an entry from what `put` takes: the text form of the content and
 * its sizes.
 *
 * @category constructors
 * @since 0.1.0
 */
export const entryOf = (
  input: PutInput & {
    readonly id: string
    readonly createdAt: number
    readonly expiresAt?: number | undefined
    readonly usedAt?: number | undefined
  }
): MemoryEntry => {
  const text = typeof input.content === "string"
  const content = typeof input.content === "string" ? input.content : JSON.stringify(input.content, null, 2)
  return {
    id: input.id,
    tool: input.tool,
    kind: text ? "text" : "json",
    summary: input.summary,
    size: content.length,
    lines: countLines(content),
    createdAt: input.createdAt,
    ...(input.owner === undefined ? {} : { owner: input.owner }),
    usedAt: input.usedAt ?? input.createdAt,
    ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
    ...(input.source === undefined ? {} : { source: { path: input.source.path, hash: input.source.hash } }),
    content
  }
}

/**
 * A new entry id: `m-` and 12 random hex digits.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeId: Effect.Effect<string> = Effect.sync(
  () => `m-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`
)

/**
 * The info of an entry (all but its content).
 *
 * @category getters
 * @since 0.1.0
 */
export const infoOf = ({ content: _, ...info }: MemoryEntry): MemoryInfo => info

/**
 * A character range of an entry, clamped to it.
 *
 * @category getters
 * @since 0.1.0
 */
export const rangeOf = (entry: MemoryEntry, offset: number, length: number): MemoryRange => ({
  id: entry.id,
  size: entry.size,
  ...sliceChars(entry.content, offset, length)
})

/**
 * Lines of an entry, clamped to it.
 *
 * @category getters
 * @since 0.1.0
 */
export const linesOf = (entry: MemoryEntry, start: number, count: number): MemoryLines => ({
  id: entry.id,
  ...sliceLines(entry.content, start, count)
})

/**
 * The order of `list`: newest first, then by id.
 *
 * @category ordering
 * @since 0.1.0
 */
export const newestFirst = (a: MemoryInfo, b: MemoryInfo): number =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

/**
 * Whether an entry is listed by a query's `owner`: an owner's own entries,
 * `null` for the entries without one, every entry when the query names none.
 *
 * @category filters
 * @since 0.2.0
 */
export const ownedBy = (info: MemoryInfo, owner: string | null | undefined): boolean =>
  owner === undefined || (owner === null ? info.owner === undefined : info.owner === owner)

/**
 * What a backend must do (`write`, `read`, `delete`, `list`); {@link fromPrimitives} derives the rest.
 *
 * @category models
 * @since 0.1.0
 */
export type { MemoryPrimitives } from "./internal/memoryModel.ts"

/**
 * Derives the whole shape from the primitives, so every backend reads, cuts,
 * forgets and reports missing entries the same way: a read of an expired
 * entry deletes it and fails with `MemoryNotFound`; a read records its time
 * (`usedAt`); a store forgets the expired entries and, past the owner's cap,
 * the owner's least recently used.
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromPrimitives = (primitives: model.MemoryPrimitives, policy?: MemoryPolicy): MemoryStoreShape => {
  const ttl = Duration.fromInputUnsafe(policy?.ttl ?? defaultPolicy.ttl)
  const ttlMillis = Duration.isFinite(ttl) ? Duration.toMillis(ttl) : undefined
  const cap = policy?.maxCharsPerOwner ?? defaultPolicy.maxCharsPerOwner
  const now = Effect.clockWith((clock) => clock.currentTimeMillis)
  // Times of use strictly increase in this process, so uses within one millisecond keep their order.
  let lastUse = 0
  const stamp = (at: number) => {
    lastUse = Math.max(at, lastUse + 0.001)
    return lastUse
  }
  const get = (id: string) =>
    Effect.gen(function* () {
      const entry = yield* primitives.read(id)
      if (entry === undefined) return yield* new MemoryNotFound({ id })
      const at = yield* now
      if (entry.expiresAt !== undefined && entry.expiresAt <= at) {
        yield* primitives.delete(id)
        return yield* new MemoryNotFound({ id })
      }
      const usedAt = stamp(at)
      yield* primitives.touch(id, usedAt)
      return { ...entry, usedAt }
    })
  /** Deletes the owner's least recently used entries while they pass the cap, never `keep`. */
  const trim = (owner: string | undefined, keep: string, at: number) =>
    Effect.gen(function* () {
      const all = yield* primitives.list({ owner: owner ?? null, limit: Number.MAX_SAFE_INTEGER, now: at })
      let total = all.reduce((sum, e) => sum + e.size, 0)
      if (total <= cap) return
      const oldestUse = [...all].sort(
        (a, b) => (a.usedAt ?? a.createdAt) - (b.usedAt ?? b.createdAt) || (a.id < b.id ? -1 : 1)
      )
      for (const e of oldestUse) {
        if (total <= cap) break
        if (e.id === keep) continue
        yield* primitives.delete(e.id)
        total -= e.size
      }
    })
  return {
    put: (input) =>
      Effect.gen(function* () {
        const id = input.id ?? (yield* makeId)
        const createdAt = yield* now
        const expiresAt = ttlMillis === undefined ? undefined : createdAt + ttlMillis
        yield* primitives.write(entryOf({ ...input, id, createdAt, expiresAt, usedAt: stamp(createdAt) }))
        yield* primitives.sweep(createdAt)
        yield* trim(input.owner, id, createdAt)
        return id
      }),
    get,
    info: (id) => Effect.map(get(id), infoOf),
    getRange: (id, { offset, length }) => Effect.map(get(id), (entry) => rangeOf(entry, offset, length)),
    getLines: (id, { start, count }) => Effect.map(get(id), (entry) => linesOf(entry, start, count)),
    delete: primitives.delete,
    list: (query) => Effect.flatMap(now, (at) => primitives.list({ ...query, now: query.now ?? at }))
  }
}

/**
 * A memory store in memory. It keeps at most `capacity` entries (default
 * 10,000), forgetting the least recently used first, and forgets by the
 * policy ({@link MemoryPolicy}).
 *
 * **Example** (The least recently used go first past a caller's cap)
 * ```ts
 * import { MemoryStore } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   const memory = yield* MemoryStore.MemoryStore
 *   yield* memory.put({ id: "a", tool: "t", content: "x".repeat(40), summary: "", owner: "me" })
 *   yield* memory.put({ id: "b", tool: "t", content: "y".repeat(40), summary: "", owner: "me" })
 *   yield* memory.get("a") // a read: "a" is now the most recently used
 *   yield* memory.put({ id: "c", tool: "t", content: "z".repeat(40), summary: "", owner: "me" })
 *   return (yield* memory.list({ owner: "me", limit: 10 })).map((e) => e.id).sort()
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(MemoryStore.layerMemory({ maxCharsPerOwner: 100 })))))
 * // => [ 'a', 'c' ]
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeMemory = (options?: { readonly capacity?: number | undefined } & MemoryPolicy): MemoryStoreShape => {
  const capacity = options?.capacity ?? 10_000
  const entries = new Map<string, MemoryEntry>()
  const live = (entry: MemoryEntry, now: number | undefined) =>
    now === undefined || entry.expiresAt === undefined || entry.expiresAt > now
  return fromPrimitives(
    {
      write: (entry) =>
        Effect.sync(() => {
          entries.delete(entry.id)
          entries.set(entry.id, entry)
          while (entries.size > capacity) {
            const oldest = entries.keys().next().value
            if (oldest === undefined) break
            entries.delete(oldest)
          }
        }),
      read: (id) => Effect.sync(() => entries.get(id)),
      delete: (id) => Effect.sync(() => entries.delete(id)),
      list: ({ tool, owner, limit, now }) =>
        Effect.sync(() => {
          const out: Array<MemoryInfo> = []
          for (const entry of entries.values()) {
            if ((tool === undefined || entry.tool === tool) && ownedBy(entry, owner) && live(entry, now)) {
              out.push(infoOf(entry))
            }
          }
          return out.sort(newestFirst).slice(0, Math.max(0, limit))
        }),
      // Moved to the end of the map's order: the capacity forgets the least recently used first.
      touch: (id, at) =>
        Effect.sync(() => {
          const entry = entries.get(id)
          if (entry === undefined) return
          entries.delete(id)
          entries.set(id, { ...entry, usedAt: at })
        }),
      sweep: (now) =>
        Effect.sync(() => {
          for (const [id, entry] of entries) if (!live(entry, now)) entries.delete(id)
        })
    },
    options
  )
}

/**
 * A fresh in-memory memory store (see {@link makeMemory}).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory = (
  options?: { readonly capacity?: number | undefined } & MemoryPolicy
): Layer.Layer<MemoryStore> => Layer.sync(MemoryStore, () => MemoryStore.of(makeMemory(options)))

/**
 * A memory store on the `SqlClient` in context (SQLite or PostgreSQL), that
 * forgets by the policy. It brings its table up to date when built.
 *
 * @category layers
 * @since 0.3.0
 */
export const layerSqlWith = (policy?: MemoryPolicy): Layer.Layer<MemoryStore, StoreError, SqlClient.SqlClient> =>
  Layer.effect(
    MemoryStore,
    Effect.map(sqlStore.make, (primitives) => MemoryStore.of(fromPrimitives(primitives, policy)))
  )

/**
 * A memory store on the `SqlClient` in context (SQLite or PostgreSQL), with
 * the default policy. It brings its table up to date when built.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql: Layer.Layer<MemoryStore, StoreError, SqlClient.SqlClient> = layerSqlWith()

/**
 * A memory store in a SQLite file (default `<cwd>/.ugent/ugent.db`). Every
 * client of one file in one process shares one connection; to build all
 * three stores at once, use `Stores.layerSqlite`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSqlite = (options: SqliteOptions = {}): Layer.Layer<MemoryStore, StoreError> =>
  layerSql.pipe(Layer.provide(databases.sqlite("memory", options)))

/**
 * A memory store in PostgreSQL, on its own pool. To share one pool with the
 * other stores, use `Stores.layerPg`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerPg = (options: PgOptions): Layer.Layer<MemoryStore, StoreError> =>
  layerSql.pipe(Layer.provide(databases.pg("memory", options)))

/**
 * The file a result shows, when it shows one: the path and hash of the one
 * read proof it carries (a result with none, or with proofs of several
 * files, has no single source). Keep it with the result (`PutInput.source`).
 *
 * **Example** (A read's result names its file)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { MemoryStore } from "@ugent/wrappers"
 * import { Effect } from "effect"
 * const proof = Effect.runSync(ReadProof.issue({ path: "notes.md", content: "hi\n", coverage: { _tag: "Whole" } }))
 * console.log(MemoryStore.sourceOf({ content: "1\thi", proof })?.path, MemoryStore.sourceOf({ n: 1 }))
 * // => notes.md undefined
 * ```
 *
 * @category getters
 * @since 0.3.0
 */
export const sourceOf = (output: unknown): { readonly path: string; readonly hash: string } | undefined => {
  const found: Array<ReadProof.ReadProof> = []
  const walk = (v: unknown, depth: number): void => {
    if (depth > 4 || found.length > 1) return
    if (ReadProof.isProofLike(v)) found.push(v)
    else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1)
    else if (typeof v === "object" && v !== null) for (const x of Object.values(v)) walk(x, depth + 1)
  }
  walk(output, 0)
  const [proof] = found
  return found.length === 1 && proof !== undefined ? { path: proof.path, hash: proof.hash } : undefined
}
