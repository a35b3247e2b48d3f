/**
 * `ugent mcp` started without `--root` serves the root its client names
 * (`roots/list`, asked once the client has initialized), and the current
 * directory for a client that reports no roots, through the official SDK
 * client over stdio.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, assert, describe, it } from "vitest"
import { type CallResult, textOf, ugentBin } from "./fixtures/connect.ts"

const base = realpathSync(mkdtempSync(join(tmpdir(), "ugent-roots-")))
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** Where the client starts the server, and the project the client works on. */
const started = join(base, "started")
const project = join(base, "project")
for (const [dir, text] of [
  [started, "the directory the server was started in\n"],
  [project, "the client's project\n"]
] as const) {
  mkdirSync(dir)
  writeFileSync(join(dir, "WHERE.md"), text)
}

const open = async (roots: ReadonlyArray<{ readonly uri: string }> | undefined, ...flags: Array<string>) => {
  const client = new Client(
    { name: "claude-code", version: "0" },
    { capabilities: roots === undefined ? {} : { roots: { listChanged: false } } }
  )
  let asked = 0
  if (roots !== undefined) {
    client.setRequestHandler(ListRootsRequestSchema, () => {
      asked++
      return { roots: [...roots] }
    })
  }
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [ugentBin, "mcp", ...flags],
      cwd: started,
      stderr: "ignore"
    })
  )
  const where = async () =>
    textOf((await client.callTool({ name: "world_tools_file_read", arguments: { path: "WHERE.md" } })) as CallResult)
  return { client, where, asked: () => asked }
}

describe("the client's roots as the default root (issue 27)", () => {
  it("a client that reports roots gets its project served, its state kept there", async () => {
    const { client, where, asked } = await open([{ uri: "https://example.com/" }, { uri: pathToFileURL(project).href }])
    try {
      assert.include(await where(), "the client's project")
      assert.strictEqual(asked(), 1)
      // The workspace's state (traces, proofs' key) is the project's, not the started directory's.
      assert.isTrue(existsSync(join(project, ".ugent")))
      assert.isFalse(existsSync(join(started, ".ugent")))
    } finally {
      await client.close()
    }
  }, 60_000)

  it("a client with no roots, or none that is a directory, gets the current directory", async () => {
    for (const roots of [undefined, [{ uri: pathToFileURL(join(base, "missing")).href }]]) {
      const { client, where } = await open(roots, "--stores", "memory")
      try {
        assert.include(await where(), "the directory the server was started in")
      } finally {
        await client.close()
      }
    }
  }, 60_000)

  it("--root wins over the client's roots, which are then not asked for", async () => {
    const { client, where, asked } = await open(
      [{ uri: pathToFileURL(project).href }],
      "--root",
      started,
      "--stores",
      "memory"
    )
    try {
      assert.include(await where(), "the directory the server was started in")
      assert.strictEqual(asked(), 0)
    } finally {
      await client.close()
    }
  }, 60_000)
})
