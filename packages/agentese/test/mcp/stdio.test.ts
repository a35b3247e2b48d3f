import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { connectStdio, failureOf, fixtureServer, rejection, resultOf, ugentBin, workspace } from "./fixtures/connect.ts"

/** The servers under test: our fixture entry, and `ugent mcp` once the binary exists. */
const targets = [
  {
    name: "stdio MCP server (test entry)",
    available: true,
    start: (root: string, trust: string, extra: ReadonlyArray<string> = []) =>
      connectStdio(fixtureServer, ["--root", root, "--trust", trust, ...extra])
  },
  {
    name: existsSync(ugentBin) ? "ugent mcp" : "ugent mcp (skipped: packages/agentese/bin/ugent.js does not exist yet)",
    available: existsSync(ugentBin),
    start: (root: string, trust: string, extra: ReadonlyArray<string> = []) =>
      connectStdio(ugentBin, ["mcp", "--root", root, "--trust", trust, ...extra])
  }
]

for (const target of targets) {
  describe.skipIf(!target.available)(target.name, () => {
    const ws = workspace({
      "hello.txt": "hello\n",
      "notes.md": "# notes\n",
      "draft.md": "draft\n",
      "alias.txt": "alias\n",
      ".env": "SECRET=1\n",
      "big.txt": `${"a line of text that fills the budget quickly\n".repeat(5000)}`
    })
    // Three connections, as the default per-caller rate limit admits a burst of 3 calls.
    let writer: Client
    let browser: Client
    let reader: Client

    beforeAll(async () => {
      ;[writer, browser, reader] = await Promise.all([
        target.start(ws.root, "L1"),
        target.start(ws.root, "L1"),
        target.start(ws.root, "L0")
      ])
    })
    afterAll(async () => {
      await Promise.all([writer?.close(), browser?.close(), reader?.close()])
      ws.remove()
    })

    it("initializes with the server's name, the tools capability and instructions", () => {
      assert.strictEqual(writer.getServerVersion()?.name, "ugent")
      assert.isDefined(writer.getServerCapabilities()?.tools)
      assert.match(writer.getInstructions() ?? "", /proof/)
    })

    it("lists the offered paths under provider-safe names, the dotted path as title, the level above L0 in _meta", async () => {
      const { tools } = await writer.listTools()
      const names = tools.map((t) => t.name)
      for (const name of names) assert.match(name, /^[a-zA-Z0-9_-]{1,64}$/)
      assert.includeMembers(names, ["world_tools_file_read", "world_tools_file_write", "world_tools_file_edit"])
      const read = tools.find((t) => t.name === "world_tools_file_read")!
      assert.strictEqual(read.title, "world.tools.file.read")
      assert.isUndefined(read._meta)
      const write = tools.find((t) => t.name === "world_tools_file_write")!
      assert.strictEqual(write._meta?.["ugent/trust"], 1)
    })

    it("annotates read-only, destructive, idempotent and closed-world tools as the tool semantics say", async () => {
      const { tools } = await writer.listTools()
      // As a client reads them, MCP's defaults filled in (not read-only, destructive, not idempotent, open world);
      // destructive and idempotent mean something only for a tool that writes.
      const hints = (name: string) => {
        const a = tools.find((t) => t.name === name)!.annotations!
        const readOnly = a.readOnlyHint ?? false
        return readOnly
          ? [readOnly, a.openWorldHint ?? true]
          : [readOnly, a.destructiveHint ?? true, a.idempotentHint ?? false, a.openWorldHint ?? true]
      }
      assert.deepStrictEqual(hints("world_tools_file_read"), [true, false])
      assert.deepStrictEqual(hints("world_tools_file_write"), [false, true, true, false])
      assert.deepStrictEqual(hints("world_tools_file_edit"), [false, true, false, false])
    })

    it("gives every tool an object-root input schema, and declares no output schema unless asked", async () => {
      const { tools } = await writer.listTools()
      for (const tool of tools) {
        assert.strictEqual(tool.inputSchema.type, "object", tool.name)
        assert.isUndefined(tool.outputSchema, tool.name)
        // Integers carry no ±(2^53 − 1) bounds: they are noise in a listing.
        assert.notInclude(JSON.stringify(tool.inputSchema), "9007199254740991", tool.name)
      }
      const read = tools.find((t) => t.name === "world_tools_file_read")!
      assert.deepInclude(read.inputSchema.required ?? [], "path")
    })

    it("with --output-schemas, declares object outputs that results (an over-budget summary too) conform to", async () => {
      const client = await target.start(ws.root, "L0", ["--output-schemas"])
      try {
        const { tools } = await client.listTools()
        const read = tools.find((t) => t.name === "world_tools_file_read")!
        assert.strictEqual(read.outputSchema?.type, "object")
        assert.notInclude(JSON.stringify(read.outputSchema), "9007199254740991")
        // The SDK client checks structuredContent against the declared schema, and throws on a mismatch.
        const small = resultOf(
          await client.callTool({ name: "world_tools_file_read", arguments: { path: "hello.txt" } })
        )
        assert.strictEqual(small.content, "1\thello")
        const big = await client.callTool({
          name: "world_tools_file_read",
          arguments: { path: "big.txt", limit: 5000 }
        })
        assert.notStrictEqual(big.isError, true)
        assert.strictEqual((big.structuredContent as { overBudget?: boolean }).overBudget, true)
      } finally {
        await client.close()
      }
    })

    it("calls a read tool: structured content with the proof as a signed token", async () => {
      const read = resultOf(await browser.callTool({ name: "world_tools_file_read", arguments: { path: "hello.txt" } }))
      assert.strictEqual(read.content, "1\thello")
      assert.isString(read.proof)
      assert.match(read.proof as string, /^rp1\./)
    })

    it("writes with the proof a read returned over the same connection", async () => {
      const read = resultOf(await writer.callTool({ name: "world_tools_file_read", arguments: { path: "notes.md" } }))
      const written = resultOf(
        await writer.callTool({
          name: "world_tools_file_write",
          arguments: { path: "notes.md", content: "# notes\n- tea\n", proof: read.proof }
        })
      )
      assert.strictEqual(written.created, false)
      assert.strictEqual(readFileSync(join(ws.root, "notes.md"), "utf8"), "# notes\n- tea\n")
    })

    it("refuses a write without a proof with a structured ProofRejected", async () => {
      const result = await writer.callTool({
        name: "world_tools_file_write",
        arguments: { path: "draft.md", content: "x" }
      })
      const failure = failureOf(result)
      assert.strictEqual(failure._tag, "ProofRejected")
      assert.strictEqual(failure.reason, "never-read")
      assert.strictEqual(failure.path, "draft.md")
      assert.match(failure.message, /Read it first/)
      assert.strictEqual(result._meta?.["ugent/kind"], "conflict")
      assert.strictEqual(readFileSync(join(ws.root, "draft.md"), "utf8"), "draft\n")
    })

    it("refuses a blocked file path with a structured denial", async () => {
      const result = await browser.callTool({ name: "world_tools_file_read", arguments: { path: ".env" } })
      const failure = failureOf(result)
      assert.isString(failure._tag)
      assert.notInclude(JSON.stringify(failure), "SECRET")
      assert.strictEqual(result._meta?.["ugent/kind"], "denied")
    })

    it("calls a path by its dotted name too, without listing it twice", async () => {
      const read = resultOf(await browser.callTool({ name: "world.tools.file.read", arguments: { path: "alias.txt" } }))
      assert.strictEqual(read.content, "1\talias")
      const { tools } = await writer.listTools()
      assert.notInclude(
        tools.map((t) => t.name),
        "world.tools.file.read"
      )
    })

    it("neither lists nor runs a path the caller is not offered, failing like an unknown tool", async () => {
      const { tools } = await reader.listTools()
      const names = tools.map((t) => t.name)
      assert.include(names, "world_tools_file_read")
      assert.notInclude(names, "world_tools_file_write")
      const hidden = await rejection(
        reader.callTool({ name: "world_tools_file_write", arguments: { path: "new.txt", content: "x" } })
      )
      const unknown = await rejection(reader.callTool({ name: "world_tools_file_nope", arguments: {} }))
      assert.strictEqual(hidden.code, -32602)
      assert.strictEqual(unknown.code, -32602)
      assert.strictEqual(
        hidden.message.replace("world_tools_file_write", "NAME"),
        unknown.message.replace("world_tools_file_nope", "NAME")
      )
      const dotted = await rejection(
        reader.callTool({ name: "world.tools.file.write", arguments: { path: "new.txt", content: "x" } })
      )
      assert.strictEqual(dotted.code, -32602)
      assert.isFalse(existsSync(join(ws.root, "new.txt")))
    })

    it("keeps serving after a refusal", async () => {
      await rejection(reader.callTool({ name: "world_tools_file_write", arguments: { path: "x.txt", content: "x" } }))
      const read = resultOf(await reader.callTool({ name: "world_tools_file_read", arguments: { path: "draft.md" } }))
      assert.strictEqual(read.content, "1\tdraft")
    })
  })
}

describe("stdio MCP server with a recipe and an approver", () => {
  const ws = workspace({ "a.txt": "a\n" })
  let client: Client

  beforeAll(async () => {
    client = await connectStdio(fixtureServer, [
      "--root",
      ws.root,
      "--trust",
      "L1",
      "--recipe",
      JSON.stringify({ deny: ["world.tools.file.edit"], requireApproval: ["world.tools.file.write"] }),
      "--approve",
      "no"
    ])
  })
  afterAll(async () => {
    await client?.close()
    ws.remove()
  })

  it("hides a path the recipe denies", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name)
    assert.notInclude(names, "world_tools_file_edit")
    assert.strictEqual(
      (await rejection(client.callTool({ name: "world_tools_file_edit", arguments: { path: "a.txt", edits: [] } })))
        .code,
      -32602
    )
  })

  it("marks a path that needs approval in _meta", async () => {
    const write = (await client.listTools()).tools.find((t) => t.name === "world_tools_file_write")!
    assert.strictEqual(write._meta?.["ugent/approval"], true)
  })

  it("sends a refused approval as a structured ApprovalDenied", async () => {
    const result = await client.callTool({ name: "world_tools_file_write", arguments: { path: "b.txt", content: "b" } })
    const failure = failureOf(result)
    assert.strictEqual(failure._tag, "ApprovalDenied")
    assert.strictEqual(failure.reason, "denied")
    assert.strictEqual(result._meta?.["ugent/kind"], "denied")
    assert.isFalse(existsSync(join(ws.root, "b.txt")))
  })
})
