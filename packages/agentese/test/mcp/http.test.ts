import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { failureOf, rejection, resultOf, workspace } from "./fixtures/connect.ts"
import { serve } from "./fixtures/http.ts"

describe("streamable-HTTP MCP endpoint", () => {
  const ws = workspace({ "hello.txt": "hello\n", "notes.md": "# notes\n", "draft.md": "draft\n" })
  let server: Awaited<ReturnType<typeof serve>>
  let client: Client

  beforeAll(async () => {
    server = await serve({ root: ws.root, trust: 1, stores: "memory", recipe: { deny: ["world.tools.file.edit"] } })
    client = await server.client()
  })
  afterAll(async () => {
    await client?.close()
    await server?.dispose()
    ws.remove()
  })

  it("initializes a session and lists the offered paths", async () => {
    assert.strictEqual(client.getServerVersion()?.name, "ugent")
    const names = (await client.listTools()).tools.map((t) => t.name)
    assert.includeMembers(names, ["world_tools_file_read", "world_tools_file_write"])
    assert.notInclude(names, "world_tools_file_edit")
  })

  it("writes with the proof of a read made in the same session", async () => {
    const read = resultOf(await client.callTool({ name: "world_tools_file_read", arguments: { path: "notes.md" } }))
    resultOf(
      await client.callTool({
        name: "world_tools_file_write",
        arguments: { path: "notes.md", content: "# notes\n- cake\n", proof: read.proof }
      })
    )
    assert.strictEqual(readFileSync(join(ws.root, "notes.md"), "utf8"), "# notes\n- cake\n")
  })

  it("sends a write without a proof back as a structured ProofRejected", async () => {
    const failure = failureOf(
      await client.callTool({ name: "world_tools_file_write", arguments: { path: "draft.md", content: "x" } })
    )
    assert.strictEqual(failure._tag, "ProofRejected")
    assert.strictEqual(failure.reason, "never-read")
  })

  it("neither lists nor runs a path the recipe denies", async () => {
    const denied = await rejection(
      client.callTool({ name: "world_tools_file_edit", arguments: { path: "draft.md", edits: [] } })
    )
    assert.strictEqual(denied.code, -32602)
    assert.match(denied.message, /not found/)
  })
})
