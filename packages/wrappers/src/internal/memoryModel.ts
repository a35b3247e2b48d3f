// What a memory store holds, shared by the public `MemoryStore` module and
// the SQL store, so that neither imports the other's module.
import { type Effect, Schema } from "effect"
import type { StoreError } from "../StoreError.ts"

export const MemoryKind = Schema.Literals(["text", "json"])
export type MemoryKind = typeof MemoryKind.Type

export const MemoryInfo = Schema.Struct({
  id: Schema.String,
  tool: Schema.String,
  kind: MemoryKind,
  summary: Schema.String,
  size: Schema.Int,
  lines: Schema.Int,
  createdAt: Schema.Number,
  /** The observer the entry belongs to; absent: no one in particular. */
  owner: Schema.optionalKey(Schema.String),
  /** When it was last stored or read (epoch milliseconds): the least recently used go first past a cap. */
  usedAt: Schema.optionalKey(Schema.Number),
  /** When it is forgotten (epoch milliseconds); absent: when deleted or pushed out. */
  expiresAt: Schema.optionalKey(Schema.Number),
  /** The file it was kept from, and that file's SHA-256 then: a read after the file changed says so. */
  source: Schema.optionalKey(Schema.Struct({ path: Schema.String, hash: Schema.String }))
})
export type MemoryInfo = typeof MemoryInfo.Type

export const MemoryEntry = Schema.Struct({ ...MemoryInfo.fields, content: Schema.String })
export type MemoryEntry = typeof MemoryEntry.Type

export interface MemoryListQuery {
  /** Only entries filed under this tool. */
  readonly tool?: string | undefined
  /** Only the entries of this owner; `null`: only entries without an owner; absent: every entry. */
  readonly owner?: string | null | undefined
  readonly limit: number
  /** Leave out the entries expired at this time (epoch milliseconds). */
  readonly now?: number | undefined
}

export interface MemoryPrimitives {
  readonly write: (entry: MemoryEntry) => Effect.Effect<void, StoreError>
  readonly read: (id: string) => Effect.Effect<MemoryEntry | undefined, StoreError>
  readonly delete: (id: string) => Effect.Effect<boolean, StoreError>
  readonly list: (query: MemoryListQuery) => Effect.Effect<ReadonlyArray<MemoryInfo>, StoreError>
  /** Records a read of an entry at `at` (its `usedAt`). */
  readonly touch: (id: string, at: number) => Effect.Effect<void, StoreError>
  /** Deletes the entries expired at `now`. */
  readonly sweep: (now: number) => Effect.Effect<void, StoreError>
}
