/**
 * A key a tool does not take is refused on every projection (the road, MCP,
 * HTTP, the CLI), with the keys the tool takes and the one each unknown key
 * most likely means; the listings say so (`additionalProperties: false`).
 * Before, `{ path, startLine, endLine }` to file.read returned the whole file
 * (file.read now takes those names; `{ path, from, to }` stands for the words
 * it does not take).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@ugent/agentese"
import { Effect } from "effect"
import { ugent, workspace } from "../cli/fixture.ts"
import { post, serve } from "../http/fixture.ts"
import { memoryClient } from "../mcp/fixtures/memory.ts"

const wanted = "Did you mean startLine (for from), endLine (for to)?"
const asked = { path: "a.txt", from: 1, to: 2 }

describe("unknown arguments, on every projection", () => {
  it.effect("threat: MCP ignores {path, from, to} and returns the whole file", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "ugent-args-"))
      writeFileSync(join(root, "a.txt"), "alpha\nbeta\ngamma\n")
      yield* Effect.gen(function* () {
        const client = yield* memoryClient()
        const listed = (yield* client.listTools()).tools.find((t) => t.name === "world_tools_file_read")
        assert.strictEqual((listed!.inputSchema as { additionalProperties?: unknown }).additionalProperties, false)
        const result = yield* client.callTool({ name: "world_tools_file_read", arguments: asked })
        assert.isTrue(result.isError)
        const text = (result.content as ReadonlyArray<{ readonly text: string }>)[0]!.text
        assert.include(text, "UnknownArguments")
        assert.include(text, wanted)
        // What the official SDK sends when a client names no arguments still works.
        const plain = yield* client.callTool({ name: "world_tools_file_read", arguments: { path: "a.txt" } })
        assert.isNotTrue(plain.isError)
      }).pipe(
        Effect.scoped,
        Effect.provide(Server.layer({ root, stores: "memory" })),
        Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
      )
    })
  )

  it.effect("threat: HTTP ignores {path, from, to} and returns the whole file", () =>
    Effect.gen(function* () {
      const { url } = yield* serve()
      const r = yield* post(`${url}/v1/invoke/world.tools.file.read`, asked)
      assert.strictEqual(r.status, 400)
      assert.strictEqual(r.body.error._tag, "UnknownArguments")
      assert.deepStrictEqual(r.body.error.known, ["path", "offset", "limit", "startLine", "endLine"])
      assert.include(r.body.error.message, wanted)
    }).pipe(Effect.scoped)
  )

  it("threat: the CLI ignores {path, from, to} and returns the whole file", async () => {
    const root = workspace()
    const r = await ugent(["invoke", "world.tools.file.read", "--input", JSON.stringify(asked), "--stores", "memory"], {
      cwd: root
    })
    assert.strictEqual(r.code, 1)
    assert.include(r.stderr, "UnknownArguments")
    assert.include(r.stderr, wanted)
  }, 60_000)
})
