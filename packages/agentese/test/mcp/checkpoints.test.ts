/**
 * Checkpoints over MCP, as an agent meets them through the official SDK
 * client: a session that edits three files (without copying proof tokens)
 * and restores to the checkpoint before all of it ends byte-identical to its
 * start, and so does one that also runs a shell command creating and
 * deleting files; a person's change in between refuses the restore, naming
 * the file.
 */
import { spawnSync } from "node:child_process"
import { existsSync, lchownSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Server } from "@ugent/agentese"
import { Effect } from "effect"
import { failureOf, resultOf, workspace } from "./fixtures/connect.ts"
import { memoryClient } from "./fixtures/memory.ts"

/** Whether bubblewrap can make a sandbox here (the shell is offered only then); in CI it must. */
const sandboxed = (() => {
  const probe = spawnSync("bwrap", ["--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "--", "/bin/true"])
  if (probe.status === 0) return true
  if (process.env.CI !== undefined) throw new Error("the shell checkpoint test needs bubblewrap in CI")
  return false
})()

/** As root, a server's shell runs as the workspace's owner: the test gives it one, as the system tests do. */
const own = (root: string) => {
  if (process.geteuid?.() !== 0) return
  for (const p of ["", ...readdirSync(root, { recursive: true, encoding: "utf8" })])
    lchownSync(join(root, p), 65534, 65534)
}

const start = { "a.txt": "alpha\n", "b.md": "# bee\n", "c.ts": "export const c = 1\n" }

/** Every file under the root but ugent's own state, with its bytes. */
const snapshot = (root: string) =>
  Object.fromEntries(
    readdirSync(root, { recursive: true, encoding: "utf8" })
      .filter((p) => !p.startsWith(".ugent"))
      .sort()
      .map((p) => [p, statSync(join(root, p)).isDirectory() ? "dir" : readFileSync(join(root, p)).toString("base64")])
  )

const roots: Array<{ remove: () => void }> = []
afterAll(() => {
  for (const r of roots) r.remove()
})

const served = (root: string) => Server.layer({ root, trust: 1, stores: "memory" })

/** A session's work: three files edited or rewritten, one created, each after a read (no proof tokens passed). */
const edits = (client: Effect.Success<ReturnType<typeof memoryClient>>) =>
  Effect.gen(function* () {
    const call = (name: string, args: Record<string, unknown>) =>
      Effect.map(client.callTool({ name, arguments: args }), (r) => resultOf(r))
    for (const path of ["a.txt", "b.md", "c.ts"]) yield* call("world_tools_file_read", { path })
    yield* call("world_tools_file_edit", { path: "a.txt", oldText: "alpha", newText: "ALPHA" })
    yield* call("world_tools_file_write", { path: "b.md", content: "# wasp\n" })
    yield* call("world_tools_file_edit", { path: "c.ts", oldText: "= 1", newText: "= 2" })
    yield* call("world_tools_file_write", { path: "d/new.txt", content: "new\n" })
    const listed = yield* call("self_tools_checkpoint_list", {})
    return listed.checkpoints as ReadonlyArray<{
      readonly id: string
      readonly callId?: string
      readonly tool?: string
      readonly caller: string
      readonly files: ReadonlyArray<{ readonly path: string }>
    }>
  })

describe("checkpoints over MCP", () => {
  it.effect("a session edits three files and creates one, then restores to before all of it: byte-identical", () => {
    const ws = workspace(start)
    roots.push(ws)
    const before = snapshot(ws.root)
    return Effect.gen(function* () {
      const client = yield* memoryClient()
      const listed = yield* edits(client)
      assert.deepStrictEqual(
        listed.map((c) => c.files.map((f) => f.path).join()),
        ["d/new.txt", "c.ts", "b.md", "a.txt"]
      )
      assert.deepStrictEqual(
        listed.map((c) => c.tool),
        ["world.tools.file.write", "world.tools.file.edit", "world.tools.file.write", "world.tools.file.edit"]
      )
      for (const c of listed) assert.isString(c.callId)
      const restored = resultOf(
        yield* client.callTool({ name: "self_tools_checkpoint_restore", arguments: { to: listed.at(-1)!.id } })
      )
      assert.strictEqual((restored.undone as ReadonlyArray<string>).length, 4)
      // Every file as it was, and the directory the write made is gone.
      assert.deepStrictEqual(snapshot(ws.root), before)
      // The restore is a checkpoint: undoing it brings the session's work back.
      resultOf(
        yield* client.callTool({
          name: "self_tools_checkpoint_restore",
          arguments: { to: restored.checkpoint as string }
        })
      )
      assert.strictEqual(readFileSync(join(ws.root, "b.md"), "utf8"), "# wasp\n")
      assert.strictEqual(readFileSync(join(ws.root, "d/new.txt"), "utf8"), "new\n")
    }).pipe(Effect.scoped, Effect.provide(served(ws.root)))
  })

  it.effect.skipIf(!sandboxed)(
    "a session edits three files, runs a shell command that creates and deletes files, and restores to before all of it: byte-identical",
    () => {
      const ws = workspace({ ...start, "old.log": "old\n" })
      roots.push(ws)
      own(ws.root)
      const before = snapshot(ws.root)
      return Effect.gen(function* () {
        const client = yield* memoryClient()
        const listed = yield* edits(client)
        const ran = resultOf(
          yield* client.callTool({
            name: "world_tools_system_bash",
            arguments: { command: "rm old.log && mkdir -p out && echo built > out/app.js && echo more >> a.txt" }
          })
        )
        assert.strictEqual(ran.exitCode, 0, String(ran.stderr))
        assert.isString(ran.checkpoint)
        assert.isFalse(existsSync(join(ws.root, "old.log")))
        const restored = resultOf(
          yield* client.callTool({ name: "self_tools_checkpoint_restore", arguments: { to: listed.at(-1)!.id } })
        )
        assert.strictEqual((restored.undone as ReadonlyArray<string>).length, 5)
        assert.deepStrictEqual(snapshot(ws.root), before)
      }).pipe(Effect.scoped, Effect.provide(Server.layer({ root: ws.root, trust: 3, stores: "memory" })))
    }
  )

  it.effect("a person's change in between refuses the restore, naming the file; nothing is restored", () => {
    const ws = workspace(start)
    roots.push(ws)
    return Effect.gen(function* () {
      const client = yield* memoryClient()
      const listed = yield* edits(client)
      writeFileSync(join(ws.root, "b.md"), "# a person's bee\n")
      const failure = failureOf(
        yield* client.callTool({ name: "self_tools_checkpoint_restore", arguments: { to: listed.at(-1)!.id } })
      )
      assert.strictEqual(failure._tag, "RestoreRefused")
      assert.deepStrictEqual(failure.files, ["b.md"])
      assert.include(failure.message, "b.md changed since")
      assert.strictEqual(readFileSync(join(ws.root, "a.txt"), "utf8"), "ALPHA\n")
      assert.strictEqual(readFileSync(join(ws.root, "b.md"), "utf8"), "# a person's bee\n")
      assert.isTrue(existsSync(join(ws.root, "d/new.txt")))
    }).pipe(Effect.scoped, Effect.provide(served(ws.root)))
  })

  it.effect(
    "threat: one MCP client cannot undo another client's checkpoints at L1 without reading the files; with proofs of reading them it can",
    () => {
      const ws = workspace(start)
      roots.push(ws)
      return Effect.gen(function* () {
        const alice = yield* memoryClient({ clientName: "alice" })
        const bob = yield* memoryClient({ clientName: "bob" })
        const listed = yield* edits(alice)
        const denied = failureOf(
          yield* bob.callTool({ name: "self_tools_checkpoint_restore", arguments: { to: listed.at(-1)!.id } })
        )
        assert.strictEqual(denied._tag, "TrustDenied")
        assert.include(denied.message, "a.txt, b.md, c.ts, d/new.txt")
        assert.strictEqual(readFileSync(join(ws.root, "a.txt"), "utf8"), "ALPHA\n")
        // Alice undoes her own work with nothing more.
        const own = resultOf(
          yield* alice.callTool({ name: "self_tools_checkpoint_restore", arguments: { to: listed[0]!.id } })
        )
        assert.deepStrictEqual(own.undone, [listed[0]!.id])
        // Bob, having read each file as it is now, may undo the rest, as he could overwrite them.
        const proofs: Array<string> = []
        for (const path of ["a.txt", "b.md", "c.ts"]) {
          const read = resultOf(yield* bob.callTool({ name: "world_tools_file_read", arguments: { path } }))
          proofs.push(read.proof as string)
        }
        const done = resultOf(
          yield* bob.callTool({
            name: "self_tools_checkpoint_restore",
            arguments: { to: listed.at(-1)!.id, proofs }
          })
        )
        assert.strictEqual((done.undone as ReadonlyArray<string>).length, 5)
        assert.strictEqual(readFileSync(join(ws.root, "a.txt"), "utf8"), "alpha\n")
      }).pipe(Effect.scoped, Effect.provide(served(ws.root)))
    }
  )

  it.effect("an L0 caller is offered the list but not the restore", () => {
    const ws = workspace(start)
    roots.push(ws)
    return Effect.gen(function* () {
      const client = yield* memoryClient()
      const names = (yield* client.listTools()).tools.map((t) => t.name)
      assert.include(names, "self_tools_checkpoint_list")
      assert.notInclude(names, "self_tools_checkpoint_restore")
    }).pipe(Effect.scoped, Effect.provide(Server.layer({ root: ws.root, trust: 0, stores: "memory" })))
  })
})
