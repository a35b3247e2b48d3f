/**
 * What `system.bash` changes in a workspace that keeps checkpoints is one
 * checkpoint (files it created, changed and deleted, directories included),
 * and restoring to it puts the workspace back byte for byte; a change made
 * by someone else between two commands is not the next command's.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Observer, Trust } from "@ugent/core"
import { Checkpoint, Checkpoints, Sandbox, SystemBash, Workspace } from "@ugent/tools"
import { Effect, Layer } from "effect"
import { cleanup, own, sandboxGate, scratch } from "../system/fixtures.ts"

const gate = sandboxGate()
afterAll(cleanup)

/** Every entry under the root but ugent's own state: a file's bytes, or "dir". */
const tree = (root: string) =>
  Object.fromEntries(
    fs
      .readdirSync(root, { recursive: true, encoding: "utf8" })
      .filter((p) => !p.startsWith(".ugent"))
      .sort()
      .map((p) => {
        const at = path.join(root, p)
        return [p, fs.lstatSync(at).isDirectory() ? "dir" : fs.readFileSync(at, "utf8")]
      })
  )

const project = () => {
  const root = scratch("ugent-cp-shell-")
  fs.writeFileSync(path.join(root, "a.txt"), "alpha\n")
  fs.writeFileSync(path.join(root, "b.txt"), "bee\n")
  fs.mkdirSync(path.join(root, "dir"))
  fs.writeFileSync(path.join(root, "dir", "c.txt"), "sea\n")
  fs.mkdirSync(path.join(root, "node_modules"))
  fs.writeFileSync(path.join(root, "node_modules", "dep.js"), "dep\n")
  own(root)
  return root
}

const bash = SystemBash.make()

const withShell = <A, E>(
  root: string,
  program: Effect.Effect<A, E, Sandbox.Sandbox | Workspace.Workspace | Trust.Capability | Observer.Observer>
) =>
  Effect.scoped(
    Effect.provide(
      program,
      Sandbox.layer().pipe(
        Layer.provideMerge(Workspace.layer({ root, checkpoints: {} })),
        Layer.provideMerge(NodeServices.layer),
        Layer.orDie,
        Layer.merge(Trust.grant(3)),
        Layer.merge(Observer.layer({ id: "agent", trust: 3 }))
      )
    )
  )

describe.skipIf(gate.skip)(`system.bash checkpoints${gate.note}`, () => {
  it.effect(
    "a command that changes, creates and deletes files (and directories) is one checkpoint; restoring it is byte-identical",
    () => {
      const root = project()
      const start = tree(root)
      return withShell(
        root,
        Effect.gen(function* () {
          const quiet = yield* bash.run({ command: "cat a.txt > /dev/null" })
          assert.isUndefined(quiet.checkpoint)
          const run = yield* bash.run({
            command:
              "echo more >> a.txt && rm b.txt && rm -r dir && mkdir -p new/deep && echo n > new/deep/n.txt && echo x > x.txt && echo changed > node_modules/dep.js"
          })
          assert.strictEqual(run.exitCode, 0, run.stderr)
          assert.isString(run.checkpoint)
          const [newest] = yield* Checkpoints.list
          assert.strictEqual(newest!.id, run.checkpoint)
          assert.deepStrictEqual(
            newest!.files
              .map((f) => [f.path, f.before === null ? "created" : f.after === null ? "deleted" : "modified"])
              .sort(),
            [
              ["a.txt", "modified"],
              ["b.txt", "deleted"],
              ["dir/c.txt", "deleted"],
              ["new/deep/n.txt", "created"],
              ["x.txt", "created"]
            ]
          )
          yield* Checkpoint.restore.run({ to: run.checkpoint! })
          const back = tree(root)
          // node_modules is ignored: rebuilt, not restored.
          assert.strictEqual(back["node_modules/dep.js"], "changed\n")
          back["node_modules/dep.js"] = "dep\n"
          assert.deepStrictEqual(back, start)
        })
      )
    }
  )

  it.effect(
    "a change someone makes between two commands is not the next command's; the next change starts from it",
    () => {
      const root = project()
      return withShell(
        root,
        Effect.gen(function* () {
          yield* bash.run({ command: "true" })
          fs.writeFileSync(path.join(root, "a.txt"), "a person's alpha\n")
          const quiet = yield* bash.run({ command: "true" })
          assert.isUndefined(quiet.checkpoint)
          const run = yield* bash.run({ command: "echo tail >> a.txt" })
          yield* Checkpoint.restore.run({ to: run.checkpoint! })
          assert.strictEqual(fs.readFileSync(path.join(root, "a.txt"), "utf8"), "a person's alpha\n")
        })
      )
    }
  )

  it.effect("a file written by file tools between commands is not recorded again by the next command", () => {
    const root = project()
    return withShell(
      root,
      Effect.gen(function* () {
        yield* bash.run({ command: "true" })
        yield* Workspace.writeFile("made.txt", new TextEncoder().encode("made\n"), { mode: "create" })
        const run = yield* bash.run({ command: "echo y > y.txt" })
        const [newest] = yield* Checkpoints.list
        assert.strictEqual(newest!.id, run.checkpoint)
        assert.deepStrictEqual(
          newest!.files.map((f) => f.path),
          ["y.txt"]
        )
      })
    )
  })
})
