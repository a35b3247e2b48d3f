/**
 * Checkpoints make the workspace's writes ones you can take back. With
 * checkpoints on (`Workspace.layer({ root, checkpoints: {} })`; a server
 * turns them on by default), every write through the workspace that changes
 * a file leaves a checkpoint: the file's content before and after (kept
 * once under its SHA-256 in `<root>/.ugent/checkpoints/`), who called, the
 * call's id and tool, and when. A shell command's changes are recorded the
 * same way (`record`). `list` shows them newest first; `restore` puts the
 * workspace back as it was before one of them, undoing it and every later
 * one, all or nothing, and refuses, naming the files, when a file changed
 * since (unless the caller shows a proof of having read what is there now),
 * is now a link or a directory, or lies outside. A restore is a checkpoint
 * itself, so it can be undone.
 *
 * Bounds: a content over `maxFileBytes` (8 MiB by default) is not kept (a
 * write of it is refused with `CheckpointRefused`); when the contents kept
 * exceed `maxTotalBytes` (512 MiB), the oldest checkpoints are dropped.
 *
 * @since 0.3.0
 */
import { Effect } from "effect"
import * as internal from "./internal/workspace/checkpoints.ts"
import { CheckpointNotFound, CheckpointRefused, RestoreRefused } from "./internal/workspace/errors.ts"
import type * as restoreImpl from "./internal/workspace/restore.ts"
import type * as shape from "./internal/workspace/shape.ts"
import type { StateError } from "./internal/workspace/state.ts"
import * as Workspace from "./Workspace.ts"

export {
  /**
   * No checkpoint with that id.
   *
   * @category errors
   * @since 0.3.0
   */
  CheckpointNotFound,
  /**
   * A write refused because it could not be taken back (its content is over the cap).
   *
   * @category errors
   * @since 0.3.0
   */
  CheckpointRefused,
  /**
   * A restore refused, nothing changed: the reason and the files.
   *
   * @category errors
   * @since 0.3.0
   */
  RestoreRefused
}

/**
 * One side of a file's change: the content's SHA-256 and size, and whether
 * the content was kept (not when it is over the cap).
 *
 * @category schemas
 * @since 0.3.0
 */
export const Version = internal.Version

/**
 * @category models
 * @since 0.3.0
 */
export type Version = internal.Version

/**
 * One file's change: its path relative to the root, and its content before
 * and after (`null`: absent, so the file was created or deleted).
 *
 * @category schemas
 * @since 0.3.0
 */
export const Change = internal.Change

/**
 * @category models
 * @since 0.3.0
 */
export type Change = internal.Change

/**
 * One checkpoint: its id, when (epoch milliseconds), who called, the call's
 * id and tool path (when a server ran the call), and the files it changed.
 *
 * @category schemas
 * @since 0.3.0
 */
export const Checkpoint = internal.Entry

/**
 * @category models
 * @since 0.3.0
 */
export type Checkpoint = internal.Entry

/**
 * The call a write belongs to (its id and tool path), recorded with each
 * checkpoint. A server sets it for every call it runs.
 *
 * **Example** (A checkpoint names its call)
 * ```ts
 * import { Checkpoints, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "cp-"))
 * const program = Effect.gen(function* () {
 *   yield* Workspace.writeFile("a.txt", new TextEncoder().encode("one\n"), { mode: "create" })
 *   const [newest] = yield* Checkpoints.list
 *   return [newest!.callId, newest!.tool, newest!.files[0]!.path]
 * })
 * const call = { id: "call-1", tool: "world.tools.file.write" }
 * console.log(await Effect.runPromise(program.pipe(Effect.provideService(Checkpoints.CurrentCall, call), Effect.provide(Workspace.layer({ root, checkpoints: {} })))))
 * // => [ 'call-1', 'world.tools.file.write', 'a.txt' ]
 * ```
 *
 * @category references
 * @since 0.3.0
 */
export const CurrentCall = internal.CurrentCall

/**
 * The bounds of a workspace's checkpoint store: `maxFileBytes`, the largest
 * content of one file kept (default 8 MiB; a write of more is refused), and
 * `maxTotalBytes`, the contents kept in all (default 512 MiB; past it the
 * oldest checkpoints are dropped).
 *
 * @category models
 * @since 0.3.0
 */
export type Options = shape.Options

/**
 * The default bounds: 8 MiB per file, 512 MiB in all.
 *
 * @category constants
 * @since 0.3.0
 */
export const defaults: { readonly maxFileBytes: number; readonly maxTotalBytes: number } = internal.defaultOptions

/**
 * A file a restore changed: how, and a proof of its restored content (whole;
 * absent for a file it removed), so an edit can follow without a read.
 *
 * @category models
 * @since 0.3.0
 */
export type RestoredFile = restoreImpl.RestoredFile

/**
 * What a restore did: the checkpoints it undid (newest first), the files it
 * changed, and its own checkpoint (absent when nothing had to change).
 *
 * @category models
 * @since 0.3.0
 */
export type Restored = restoreImpl.Restored

/**
 * The failures of a restore.
 *
 * @category models
 * @since 0.3.0
 */
export type RestoreError = restoreImpl.RestoreError

/**
 * The failures of reading or writing the store (`.ugent` not as ugent made
 * it, or the file system).
 *
 * @category models
 * @since 0.3.0
 */
export type StoreError = StateError

/**
 * A file as a change recorded by {@link CheckpointsShape.record} saw it:
 * its bytes before and after (`undefined`: absent), or, over the cap, only
 * their hash and size.
 *
 * @category models
 * @since 0.3.0
 */
export type Observed = shape.Observed

/**
 * The checkpoints of one workspace: `list` (newest first), `restore` (see
 * the module documentation; `proofs` are whole-file read proofs of files
 * someone else changed since, whose content may then be overwritten) and
 * `record` (changes made outside the workspace's own writes, a shell
 * command's, as one checkpoint of the call in progress).
 *
 * @category models
 * @since 0.3.0
 */
export type CheckpointsShape = shape.CheckpointsShape

/**
 * The checkpoints of the current workspace, newest first (empty when the
 * workspace keeps none).
 *
 * @category accessors
 * @since 0.3.0
 */
export const list: Effect.Effect<ReadonlyArray<Checkpoint>, StoreError, Workspace.Workspace> = Workspace.Workspace.use(
  (ws) => (ws.checkpoints === undefined ? Effect.succeed([]) : ws.checkpoints.list)
)
