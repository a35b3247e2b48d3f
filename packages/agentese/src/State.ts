/**
 * A server's state in its workspace: the folder `<root>/.ugent/` (the SQLite
 * stores, reports; it ignores itself in git) and the key that signs read
 * proofs, shared by every ugent process on the workspace so that a proof
 * printed by one `ugent invoke` is accepted by the next. The key is
 * `UGENT_PROOF_KEY` (at least 32 bytes) when set, else `.ugent/proof.key`,
 * made on first use (32 random bytes, owner-only). Any host (the CLI, a
 * program embedding the server) gets both from {@link layer}. The folder is
 * opened through the workspace jail by `StateDir` of `@ugent/tools` (never a
 * link, owner-only key made exclusively), so a cloned repository cannot send
 * ugent's writes elsewhere nor plant a key it knows.
 *
 * @since 0.2.0
 */
import { ReadProof, type ToolError } from "@ugent/core"
import { StateDir } from "@ugent/tools"
import { Effect, Layer, Schema } from "effect"

/**
 * The state folder or the proof key cannot be used: a message says how to
 * fix it.
 *
 * @category errors
 * @since 0.2.0
 */
export class StateError extends Schema.TaggedError<StateError>()("StateError", {
  path: Schema.String,
  problem: Schema.String,
  fix: Schema.String
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    return this.fix === "" ? this.problem : `${this.path}: ${this.problem}. ${this.fix}`
  }
}

const fromOpen = (root: string) => (e: StateDir.OpenError) =>
  new StateError({ path: `${root}/${StateDir.folderName}`, problem: e.message, fix: "" })

/**
 * Opens `<root>/.ugent/` through the jail, making it if needed (it ignores
 * itself in git).
 *
 * @category state
 * @since 0.2.0
 */
export const open = (root: string): Effect.Effect<StateDir.StateDir, StateError> =>
  Effect.mapError(StateDir.open(root), fromOpen(root))

/**
 * Makes `<root>/.ugent/` if needed and returns its real path.
 *
 * @category state
 * @since 0.2.0
 */
export const prepare = (root: string): Effect.Effect<string, StateError> => Effect.map(open(root), (dir) => dir.path)

/**
 * The path of the SQLite stores, `<root>/.ugent/ugent.db`, after checking
 * that it and its companion files are regular files or missing.
 *
 * @category state
 * @since 0.2.0
 */
export const database = (root: string): Effect.Effect<string, StateError> =>
  Effect.flatMap(open(root), (dir) => Effect.mapError(dir.database(), fromOpen(root)))

/**
 * The real path of `<root>/.ugent/reports/`, made if missing (never a link).
 *
 * @category state
 * @since 0.2.0
 */
export const reports = (root: string): Effect.Effect<string, StateError> =>
  Effect.flatMap(open(root), (dir) => Effect.mapError(dir.reports, fromOpen(root)))

/**
 * The workspace's proof key: `UGENT_PROOF_KEY` when set, else
 * `.ugent/proof.key`, made on first use.
 *
 * @category state
 * @since 0.2.0
 */
export const proofKey = (root: string): Effect.Effect<Uint8Array, StateError> => {
  const fromEnv = process.env.UGENT_PROOF_KEY
  if (fromEnv !== undefined && fromEnv !== "") {
    const bytes = new TextEncoder().encode(fromEnv)
    return bytes.length < 32
      ? Effect.fail(
          new StateError({
            path: "UGENT_PROOF_KEY",
            problem: "it is shorter than 32 bytes",
            fix: "Set it to 32 or more random bytes, e.g. the output of: openssl rand -hex 32"
          })
        )
      : Effect.succeed(bytes)
  }
  return Effect.flatMap(open(root), (dir) => Effect.mapError(dir.proofKey, fromOpen(root)))
}

/**
 * The state of a workspace as a layer: the folder is made and the proof key
 * is in force for everything built on it.
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = (root: string): Layer.Layer<never, StateError> =>
  Layer.unwrap(Effect.map(proofKey(root), (key) => ReadProof.layerKey(key)))
