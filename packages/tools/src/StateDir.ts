/**
 * `StateDir` is ugent's own state folder in a workspace, `<root>/.ugent`:
 * the proof key that signs read proofs (`proof.key`), the SQLite stores
 * (`ugent.db`), reports (`reports/`), and a `.gitignore` that keeps the
 * folder out of the user's git status. It is opened through the jail, so a
 * cloned repository or an unpacked archive cannot turn ugent's own writes
 * into writes elsewhere, nor hand it a key someone else knows:
 *
 * - `.ugent` must be a real directory (never a symbolic link), owned by the
 *   current user and not writable by others; it is created with mode 0700,
 *   opened with `O_DIRECTORY | O_NOFOLLOW`, and its descriptor verified.
 *   Every file in it is named through that descriptor.
 * - `proof.key` must be a regular file (never a link), owned by the current
 *   user and readable by no one else (no group or other permission bits), and
 *   hold at least 32 bytes in hex. It is made with `O_EXCL` and mode 0600
 *   (written aside, then linked into place: a concurrent process sees no key
 *   or a whole one).
 * - `ugent.db` and its `-wal`, `-shm` and `-journal` files must be regular
 *   files or missing; `reports/` a real directory.
 *
 * Anything else is refused with `StateRefused`, whose message says how to
 * fix it (in short: remove the offending entry; ugent makes a new one).
 * The workspace policy blocks `.ugent` for every file tool, so tools neither
 * read nor write it.
 *
 * What remains: a key planted with mode 0600 by an archive that preserves
 * owners and modes passes the checks (it is owned by the user who unpacked
 * it); ugent cannot tell it from its own. SQLite opens the database by path
 * after the check, so a link swapped in at that moment by a process of the
 * same user is not caught.
 *
 * @since 0.2.0
 */
import { randomBytes } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import { FileSystemError, StateRefused } from "./internal/workspace/errors.ts"
import {
  checkRegularOrMissing,
  createExclusive,
  readPrivate,
  type StateError,
  withDirectory
} from "./internal/workspace/state.ts"
import { call, codeOf } from "./internal/workspace/system.ts"

export {
  /**
   * The state folder or a file in it is not what ugent made.
   *
   * @category errors
   * @since 0.2.0
   */
  StateRefused
}

/**
 * The failures of opening the state folder or a file in it.
 *
 * @category models
 * @since 0.2.0
 */
export type OpenError = StateError

/**
 * The name of the state folder under the workspace root.
 *
 * @category constants
 * @since 0.2.0
 */
export const folderName = ".ugent"

/**
 * The state folder of one workspace, checked.
 *
 * @category models
 * @since 0.2.0
 */
export interface StateDir {
  /** The real path of `<root>/.ugent`. */
  readonly path: string
  /** The proof key: read if it is there (and safe), made otherwise. */
  readonly proofKey: Effect.Effect<Uint8Array, OpenError>
  /** The path of a database file in the folder (default `ugent.db`), after checking it and its companions. */
  readonly database: (name?: string) => Effect.Effect<string, OpenError>
  /** The real path of `reports/`, created if missing. */
  readonly reports: Effect.Effect<string, OpenError>
}

/** 32 bytes in hex: 64 characters. */
const keyHex = /^[0-9a-f]{64,}$/

/**
 * Opens (creating if needed) the state folder of the workspace rooted at
 * `root`, and writes its `.gitignore` if missing.
 *
 * **Example** (The proof key is made once, then read)
 * ```ts
 * import { StateDir } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdtempSync, statSync, symlinkSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "state-"))
 * const program = Effect.gen(function* () {
 *   const state = yield* StateDir.open(root)
 *   const first = yield* state.proofKey
 *   const again = yield* state.proofKey
 *   return [first.length, Buffer.compare(first, again), (statSync(join(root, ".ugent", "proof.key")).mode & 0o777).toString(8)]
 * })
 * console.log(await Effect.runPromise(program))
 * // => [ 32, 0, '600' ]
 * const planted = mkdtempSync(join(tmpdir(), "state-"))
 * symlinkSync(tmpdir(), join(planted, ".ugent"))
 * const refused = await Effect.runPromise(Effect.flip(StateDir.open(planted)))
 * console.log(refused._tag, refused._tag === "StateRefused" && refused.reason)
 * // => StateRefused link
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const open = (root: string): Effect.Effect<StateDir, OpenError> =>
  Effect.gen(function* () {
    const realRoot = yield* call(
      () => fsp.realpath(path.resolve(root)),
      (u) =>
        new FileSystemError({ path: root, operation: "open the workspace root", code: codeOf(u), retryable: false })
    )
    const dir = path.join(realRoot, folderName)
    const shown = (name?: string) => (name === undefined ? dir : path.join(dir, name))
    const inFolder = <A, E>(use: (at: string) => Effect.Effect<A, E>) => withDirectory(dir, dir, dir, use)
    yield* inFolder((at) =>
      createExclusive(at, ".gitignore", shown(".gitignore"), new TextEncoder().encode("*\n"), 0o644)
    )
    const readKey = inFolder((at) => readPrivate(at, "proof.key", shown("proof.key"), 4096))
    const decode = (bytes: Uint8Array) => {
      const hex = Buffer.from(bytes).toString("utf8").trim()
      return keyHex.test(hex) && hex.length % 2 === 0
        ? Effect.succeed(new Uint8Array(Buffer.from(hex, "hex")))
        : Effect.fail(new StateRefused({ path: shown("proof.key"), reason: "malformed" }))
    }
    const proofKey = Effect.gen(function* () {
      const existing = yield* readKey
      if (existing !== undefined) return yield* decode(existing)
      const fresh = new TextEncoder().encode(randomBytes(32).toString("hex"))
      yield* inFolder((at) => createExclusive(at, "proof.key", shown("proof.key"), fresh, 0o600))
      // Made by us or, in a race, by another process: read whichever is in place, with the same checks.
      const made = yield* readKey
      if (made === undefined) return yield* new StateRefused({ path: shown("proof.key"), reason: "malformed" })
      return yield* decode(made)
    })
    const database = (name = "ugent.db") =>
      /^[^/\\\0]+$/.test(name) && name !== "." && name !== ".."
        ? inFolder((at) =>
            Effect.gen(function* () {
              for (const file of [name, `${name}-wal`, `${name}-shm`, `${name}-journal`]) {
                yield* checkRegularOrMissing(at, file, shown(file))
              }
              return shown(name)
            })
          )
        : Effect.fail(new StateRefused({ path: shown(name), reason: "not-a-file" }))
    const reports = inFolder((at) =>
      withDirectory(path.join(at, "reports"), shown("reports"), path.join(dir, "reports"), () =>
        Effect.succeed(shown("reports"))
      )
    )
    return { path: dir, proofKey, database, reports } satisfies StateDir
  })
