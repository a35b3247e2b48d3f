/**
 * Temporary workspaces for the tests: a parent directory holding the root
 * (`ws`), a sibling outside it (`outside`, with a secret file) and a sibling
 * whose name has the root as a prefix (`ws_evil`). Removed when the test's
 * scope closes.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Changes, Trust } from "@ugent/core"
import { Workspace } from "@ugent/tools"
import { Effect, Layer, type Scope } from "effect"

export interface Fixture {
  /** The workspace root as created (already canonical: tmpdir is resolved). */
  readonly root: string
  readonly outside: string
  readonly evil: string
  /** Writes a file under the root (parents created); returns its absolute path. */
  readonly file: (relative: string, content: string | Uint8Array) => string
  /** Makes a directory under the root. */
  readonly dir: (relative: string) => string
  /** Creates a symbolic link at `relative` (under the root) pointing to `target` (as given). */
  readonly link: (target: string, relative: string) => string
  readonly at: (relative: string) => string
}

export const OUTSIDE_SECRET = "OUTSIDE-BYTES-must-never-be-read\n"

export const fixture: Effect.Effect<Fixture, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    const parent = mkdtempSync(join(tmpdir(), "ugent-ws-"))
    const root = join(parent, "ws")
    const outside = join(parent, "outside")
    const evil = join(parent, "ws_evil")
    for (const d of [root, outside, evil]) mkdirSync(d)
    writeFileSync(join(outside, "data.txt"), OUTSIDE_SECRET)
    writeFileSync(join(evil, "loot.txt"), OUTSIDE_SECRET)
    const at = (relative: string) => join(root, relative)
    return {
      parent,
      root,
      outside,
      evil,
      at,
      file: (relative: string, content: string | Uint8Array) => {
        mkdirSync(dirname(at(relative)), { recursive: true })
        writeFileSync(at(relative), content)
        return at(relative)
      },
      dir: (relative: string) => {
        mkdirSync(at(relative), { recursive: true })
        return at(relative)
      },
      link: (target: string, relative: string) => {
        mkdirSync(dirname(at(relative)), { recursive: true })
        symlinkSync(target, at(relative))
        return at(relative)
      }
    }
  }),
  (fx) => Effect.sync(() => rmSync(fx.parent, { recursive: true, force: true }))
)

/** The layers a file tool needs: the workspace, a fresh Changes hub and the trust capabilities up to `level`. */
export const toolLayer = (
  root: string,
  level: 0 | 1 | 2 | 3 = 1,
  policy?: Workspace.PolicyOptions
): Layer.Layer<Workspace.Workspace | Trust.Capability, unknown> =>
  Layer.mergeAll(Workspace.layer({ root, policy }), Changes.layer, Trust.grant(level as 3))

/** Runs `f` with a fresh fixture and its workspace provided. */
export const withWorkspace = <A, E, R>(
  f: (fx: Fixture) => Effect.Effect<A, E, R>,
  options?: { readonly level?: 0 | 1 | 2 | 3; readonly policy?: Workspace.PolicyOptions }
) =>
  Effect.gen(function* () {
    const fx = yield* fixture
    return yield* f(fx).pipe(Effect.provide(toolLayer(fx.root, options?.level ?? 1, options?.policy)))
  })
