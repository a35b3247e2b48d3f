// What a trace store holds and answers, shared by the public `TraceStore`
// module and the backends, so that neither imports the other's module.
import type { Duration, Effect, Option } from "effect"
import { Schema } from "effect"
import type { StoreError } from "../StoreError.ts"

export const TraceStatus = Schema.Literals(["success", "failure", "interrupted", "defect"])
export type TraceStatus = typeof TraceStatus.Type

export const Clipped = Schema.Struct({ size: Schema.Number, sha256: Schema.String })
export type Clipped = typeof Clipped.Type

export const TraceRecord = Schema.Struct({
  id: Schema.String,
  parentId: Schema.optionalKey(Schema.String),
  rootId: Schema.String,
  /** The tool's path or name: `"file.read"`, `"world.tools.file.read"`. */
  path: Schema.String,
  input: Schema.Json,
  output: Schema.optionalKey(Schema.Json),
  error: Schema.optionalKey(Schema.Json),
  status: TraceStatus,
  startedAt: Schema.Number,
  durationMillis: Schema.Number,
  /** The alternatives the caller considered (paths or names); may be empty. */
  alternatives: Schema.Array(Schema.String),
  observerId: Schema.optionalKey(Schema.String),
  sessionId: Schema.optionalKey(Schema.String),
  /** The client's own id of the call (Claude Code's tool-use id; Codex's thread and turn), to join its records with ours. */
  clientCallId: Schema.optionalKey(Schema.String),
  /** The server that served the call, in a room of several (`ugent serve --instance`). */
  instance: Schema.optionalKey(Schema.String),
  /** The payloads kept as their head only, each with its full size and hash. */
  clipped: Schema.optionalKey(
    Schema.Struct({
      input: Schema.optionalKey(Clipped),
      output: Schema.optionalKey(Clipped),
      error: Schema.optionalKey(Clipped)
    })
  )
})
export type TraceRecord = typeof TraceRecord.Type

export interface RecentQuery {
  readonly limit: number
  readonly path?: string | undefined
}

export interface Retention {
  readonly maxAge?: Duration.Input | undefined
  readonly maxBytes?: number | undefined
}

export interface TraceOptions {
  readonly payloads?: "head" | "full" | undefined
  readonly headChars?: number | undefined
  readonly retention?: Retention | false | undefined
}

export interface Pruned {
  readonly byAge: number
  readonly bySize: number
}

export interface TraceStoreShape {
  /**
   * Stores records. A record whose id is already stored is ignored (the first
   * write wins). A batching backend may write them later, but always before
   * its scope closes.
   */
  readonly append: (records: ReadonlyArray<TraceRecord>) => Effect.Effect<void, StoreError>
  /** Waits until every record appended so far is written. */
  readonly flush: Effect.Effect<void, StoreError>
  readonly get: (id: string) => Effect.Effect<Option.Option<TraceRecord>, StoreError>
  /** The calls made directly under `id`. */
  readonly children: (id: string) => Effect.Effect<ReadonlyArray<TraceRecord>, StoreError>
  /** Every call of the tree rooted at `rootId`, the root included. */
  readonly byRoot: (rootId: string) => Effect.Effect<ReadonlyArray<TraceRecord>, StoreError>
  readonly recent: (query: RecentQuery) => Effect.Effect<ReadonlyArray<TraceRecord>, StoreError>
  /** Applies the retention now (the store also does on its own): removes what is too old, then the oldest past the size. */
  readonly prune: Effect.Effect<Pruned, StoreError>
}
