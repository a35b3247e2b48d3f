/**
 * The tool list a client pays for in every request to its model: no larger
 * per tool than the reference filesystem server's (both measured as the
 * official SDK client lists them, JSON bytes), without losing what models
 * need (each tool's description, its inputs with theirs, unknown keys refused).
 */
import { createRequire } from "node:module"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { assert, describe, it } from "@effect/vitest"
import { afterAll } from "vitest"
import { connect, connectStdio, ugentBin, workspace } from "./fixtures/connect.ts"

const ws = workspace({ "README.md": "# demo\n" })
afterAll(() => ws.remove())

const referenceServer = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js")

const bytesPerTool = (tools: ReadonlyArray<unknown>) => Buffer.byteLength(JSON.stringify(tools)) / tools.length

describe("the tool list (issue 27)", () => {
  it("is no larger per tool than the reference filesystem server's, and keeps what models need", async () => {
    const reference = await connect(
      new StdioClientTransport({ command: process.execPath, args: [referenceServer, ws.root], stderr: "ignore" })
    )
    const ours = await connectStdio(ugentBin, ["mcp", "--root", ws.root, "--stores", "memory", "--trust", "L3"])
    try {
      const theirs = (await reference.listTools()).tools
      const tools = (await ours.listTools()).tools
      // Measured when this test was written: the reference 12,973 bytes for 14 tools; ours 21,272 for 23 (was 25,339).
      assert.isAtMost(
        bytesPerTool(tools),
        bytesPerTool(theirs),
        `${JSON.stringify(tools).length} bytes, ${tools.length} tools`
      )
      for (const tool of tools) {
        assert.isAbove(tool.description?.length ?? 0, 20, tool.name)
        assert.strictEqual(tool.inputSchema.type, "object", tool.name)
        assert.strictEqual(tool.inputSchema.additionalProperties, false, tool.name)
        assert.match(tool.title ?? "", /^(world|self)\./, tool.name)
      }
      const read = tools.find((t) => t.name === "world_tools_file_read")!
      const props = read.inputSchema.properties as Record<string, { description?: string }>
      for (const key of ["path", "offset", "limit"]) assert.isAbove(props[key]?.description?.length ?? 0, 10, key)
      // Hints only where they differ from MCP's defaults; the level only above L0.
      assert.deepStrictEqual(read.annotations, { readOnlyHint: true, openWorldHint: false })
      assert.isUndefined(read._meta)
      const edit = tools.find((t) => t.name === "world_tools_file_edit")!
      assert.deepStrictEqual(edit.annotations, { openWorldHint: false })
      assert.deepStrictEqual(edit._meta, { "ugent/trust": 1 })
    } finally {
      await reference.close()
      await ours.close()
    }
  }, 60_000)
})
