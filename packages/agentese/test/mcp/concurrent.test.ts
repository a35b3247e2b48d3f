/**
 * Threat 46 over MCP stdio: concurrent `tools/call` edits carrying the token
 * of one read, answered by one server process.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { type CallResult, connectStdio, failureOf, fixtureServer, resultOf, workspace } from "./fixtures/connect.ts"

const ws = workspace({ "a.txt": "count: 0\n" })
afterAll(() => ws.remove())

describe("MCP: concurrent writes", () => {
  it("threat 46: ten concurrent file.edit calls with the proof of one version: one success, nine ProofRejected", async () => {
    const client = await connectStdio(fixtureServer, ["--root", ws.root, "--trust", "L1"])
    try {
      for (let round = 0; round < 5; round++) {
        const read = resultOf(
          (await client.callTool({ name: "world_tools_file_read", arguments: { path: "a.txt" } })) as CallResult
        )
        const current = String(read.content).split("\t")[1]!
        const replies = (await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            client.callTool({
              name: "world_tools_file_edit",
              arguments: { path: "a.txt", proof: read.proof, oldText: current, newText: `count: ${round}.${i}` }
            })
          )
        )) as Array<CallResult>
        const won = replies.flatMap((r, i) => (r.isError === true ? [] : [i]))
        assert.strictEqual(won.length, 1, `round ${round}: one success per version, got ${won.length}`)
        for (const r of replies) {
          if (r.isError !== true) continue
          const failure = failureOf(r)
          assert.strictEqual(failure._tag, "ProofRejected")
          assert.strictEqual(failure.reason, "changed")
        }
        assert.strictEqual(readFileSync(join(ws.root, "a.txt"), "utf8"), `count: ${round}.${won[0]}\n`)
      }
    } finally {
      await client.close()
    }
  }, 60_000)
})
