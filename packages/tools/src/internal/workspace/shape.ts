/**
 * The shape of a workspace's checkpoints, apart from `Checkpoints.ts` so
 * that `Workspace.ts` can name it without importing the module that imports
 * it.
 *
 * @internal
 */
import type { ReadProof } from "@ugent/core"
import type { Effect } from "effect"
import type { Entry } from "./checkpoints.ts"
import type { Restored, RestoreError } from "./restore.ts"
import type { StateError } from "./state.ts"

export interface Options {
  readonly maxFileBytes?: number | undefined
  readonly maxTotalBytes?: number | undefined
}

export interface Observed {
  readonly path: string
  readonly before: Uint8Array | { readonly hash: string; readonly size: number } | undefined
  readonly after: Uint8Array | { readonly hash: string; readonly size: number } | undefined
}

export interface CheckpointsShape {
  readonly options: { readonly maxFileBytes: number; readonly maxTotalBytes: number }
  /** Every checkpoint, newest first. */
  readonly list: Effect.Effect<ReadonlyArray<Entry>, StateError>
  /** The workspace back as it was before checkpoint `to`. */
  readonly restore: (
    to: string,
    options?: { readonly proofs?: ReadonlyArray<ReadProof.ReadProof> | undefined }
  ) => Effect.Effect<Restored, RestoreError>
  /** Records changes made outside the workspace's own writes as one checkpoint; nothing when no file changed. */
  readonly record: (changes: ReadonlyArray<Observed>) => Effect.Effect<Entry | undefined, StateError>
  /**
   * Runs a foreground shell command and records what it changed in the
   * workspace as one checkpoint of the call in progress (none when nothing
   * changed). Commands are captured one at a time.
   */
  readonly capture: <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<readonly [A, Entry | undefined], E | StateError, R>
}
