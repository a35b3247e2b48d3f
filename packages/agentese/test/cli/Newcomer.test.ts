/**
 * What a newcomer meets on the command line: messages that say what to type
 * next, the spellings people use (`--trust 1`, `ugent mcp /path`), and a
 * `serve` that says which profile it runs and defaults to one a small team
 * can use.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { assert, describe, it } from "@effect/vitest"
import { bin, exited, onlyJson, start, ugent, workspace } from "./fixture.ts"

describe("ugent for a newcomer", () => {
  it("a write refused for its level tells a CLI user to pass --trust, not to ask an operator", async () => {
    const root = workspace()
    const write = ["invoke", "world.tools.file.write", "--input", '{"path": "c.txt", "content": "x"}']
    const text = await ugent(write, { cwd: root })
    assert.strictEqual(text.code, 1)
    assert.include(text.stderr, "Run it again with --trust L1")
    assert.notInclude(text.stderr, "operator")
    const json = onlyJson(await ugent([...write, "--json"], { cwd: root })) as { error: { message: string } }
    assert.include(json.error.message, "--trust L1")
    assert.isFalse(existsSync(join(root, "c.txt")))
  })

  it("invoke file.read suggests world.tools.file.read", async () => {
    const root = workspace()
    const run = await ugent(["invoke", "file.read", "--input", '{"path": "a.txt"}'], { cwd: root })
    assert.strictEqual(run.code, 1)
    assert.include(run.stderr, "No tool at file.read. Did you mean world.tools.file.read")
  })

  it("--trust 1 is L1", async () => {
    const root = workspace()
    const run = await ugent(
      ["invoke", "world.tools.file.write", "--input", '{"path": "c.txt", "content": "x"}', "--trust", "1", "--json"],
      { cwd: root }
    )
    assert.isTrue(onlyJson(run).ok, run.stdout)
    const bad = await ugent(["list", "--trust", "7"], { cwd: root })
    assert.strictEqual(bad.code, 2)
    assert.include(bad.stderr, "--trust 7 is not a trust level: give L0, L1, L2 or L3 (or 0..3)")
  })

  it("ugent mcp /path serves that root, as reference servers take it; two different roots are a usage error", async () => {
    const root = workspace()
    const client = new Client({ name: "newcomer", version: "0" })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [bin, "mcp", root, "--stores", "memory"],
        cwd: workspace(),
        stderr: "ignore"
      })
    )
    try {
      const r = await client.callTool({ name: "world_tools_file_read", arguments: { path: "a.txt" } })
      assert.isNotTrue(r.isError)
      assert.include(JSON.stringify(r.structuredContent), "alpha")
    } finally {
      await client.close()
    }
    const two = await ugent(["mcp", root, "--root", workspace()], { cwd: root })
    assert.strictEqual(two.code, 2)
    assert.include(two.stderr, "Two roots")
  }, 60_000)

  it("serve says which profile it runs, and defaults to team, whose limits a working session does not meet", async () => {
    const root = workspace(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, `file ${i}\n`])))
    const child = start(["serve", "--port", "0", "--stores", "memory"], root)
    let stderr = ""
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
          stderr += chunk
          const m = /serving (http:\/\/\S+) /.exec(stderr)
          if (m !== null && stderr.includes("default profile")) resolve(m[1]!)
        })
        child.on("exit", (code) => reject(new Error(`ugent serve exited with ${code}: ${stderr}`)))
      })
      assert.include(stderr, "profile team:")
      assert.include(stderr, "team is serve's default profile")
      // Twenty reads of twenty files in a row: under shared the sixth was refused (5 a minute).
      for (let i = 0; i < 20; i++) {
        const r = await fetch(`${url}/v1/invoke/world.tools.file.read`, {
          method: "POST",
          body: JSON.stringify({ path: `f${i}.txt` })
        })
        assert.strictEqual(r.status, 200, `read ${i}`)
      }
    } finally {
      child.kill("SIGTERM")
      await exited(child)
    }
  }, 60_000)
})
