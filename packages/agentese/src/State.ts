/**
 * A server's state in its workspace: the folder `<root>/.ugent/` (the SQLite
 * stores, reports; it ignores itself in git) and the key that signs read
 * proofs, shared by every ugent process on the workspace so that a proof
 * printed by one `ugent invoke` is accepted by the next. The key is
 * `UGENT_PROOF_KEY` (at least 32 bytes) when set, else `.ugent/proof.key`,
 * made on first use (32 random bytes, owner-only). Any host (the CLI, a
 * program embedding the server) gets both from {@link layer}.
 *
 * @since 0.2.0
 */
import { randomBytes } from "node:crypto"
import { existsSync, linkSync, lstatSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { ReadProof, type ToolError } from "@ugent/core"
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
    return `${this.path}: ${this.problem}. ${this.fix}`
  }
}

/**
 * The state folder of a workspace.
 *
 * @category paths
 * @since 0.2.0
 */
export const dirOf = (root: string): string => resolve(root, ".ugent")

/**
 * Makes `<root>/.ugent/` if needed (it ignores itself in git) and returns
 * its path.
 *
 * @category state
 * @since 0.2.0
 */
export const prepare = (root: string): Effect.Effect<string, StateError> =>
  Effect.try({
    try: () => {
      const dir = dirOf(root)
      const st = lstatSync(dir, { throwIfNoEntry: false })
      if (st !== undefined && !st.isDirectory()) {
        throw new StateError({
          path: dir,
          problem: st.isSymbolicLink() ? "it is a symbolic link" : "it is not a directory",
          fix: "Remove it (ugent keeps its stores and keys there and makes it itself)."
        })
      }
      if (st === undefined) mkdirSync(dir, { mode: 0o700 })
      try {
        writeFileSync(resolve(dir, ".gitignore"), "*\n", { flag: "wx" })
      } catch (e) {
        if ((e as { code?: unknown }).code !== "EEXIST") throw e
      }
      return dir
    },
    catch: (e) =>
      e instanceof StateError
        ? e
        : new StateError({
            path: dirOf(root),
            problem: `it could not be made (${e instanceof Error ? e.message : String(e)})`,
            fix: "Use a root you can write, or keep the stores in memory and set UGENT_PROOF_KEY."
          })
  })

/**
 * The workspace's proof key: `UGENT_PROOF_KEY` when set, else
 * `.ugent/proof.key`, made on first use.
 *
 * @category state
 * @since 0.2.0
 */
export const proofKey = (root: string): Effect.Effect<Uint8Array, StateError> =>
  Effect.gen(function* () {
    const fromEnv = process.env.UGENT_PROOF_KEY
    if (fromEnv !== undefined && fromEnv !== "") {
      const bytes = new TextEncoder().encode(fromEnv)
      if (bytes.length < 32) {
        return yield* new StateError({
          path: "UGENT_PROOF_KEY",
          problem: "it is shorter than 32 bytes",
          fix: "Set it to 32 or more random bytes, e.g. the output of: openssl rand -hex 32"
        })
      }
      return bytes
    }
    const dir = yield* prepare(root)
    const file = resolve(dir, "proof.key")
    return yield* Effect.try({
      try: () => {
        if (!existsSync(file)) {
          // Written aside, then linked into place: a concurrent process sees no key or a whole one.
          const aside = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`
          writeFileSync(aside, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" })
          try {
            linkSync(aside, file)
          } catch (e) {
            // Another process made it first: use theirs.
            if ((e as { code?: unknown }).code !== "EEXIST") throw e
          } finally {
            unlinkSync(aside)
          }
        }
        const st = lstatSync(file)
        if (!st.isFile()) throw new Error("it is not a regular file")
        if ((st.mode & 0o077) !== 0) throw new Error("other users may read it (it must be owner-only, mode 600)")
        if (typeof process.getuid === "function" && st.uid !== process.getuid()) {
          throw new Error("it belongs to another user")
        }
        const hex = readFileSync(file, "utf8").trim()
        if (!/^[0-9a-f]{64,}$/.test(hex)) throw new Error("it is not a hex key of 32 bytes or more")
        return Buffer.from(hex, "hex")
      },
      catch: (e) =>
        new StateError({
          path: file,
          problem: `the proof key cannot be used: ${e instanceof Error ? e.message : String(e)}`,
          fix: `Delete ${file} so that a new one is made, or set UGENT_PROOF_KEY.`
        })
    })
  })

/**
 * The state of a workspace as a layer: the folder is made and the proof key
 * is in force for everything built on it.
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = (root: string): Layer.Layer<never, StateError> =>
  Layer.unwrap(Effect.map(proofKey(root), (key) => ReadProof.layerKey(key)))
