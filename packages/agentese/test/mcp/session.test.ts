/**
 * A coding agent's minute over MCP, as a desktop client makes it: the
 * official SDK client drives the real `ugent mcp` binary through 200 mixed
 * calls (reads, edits without proof tokens, re-reads of edited files, git
 * status after each edit, searches, a 1 MB file, a denied `.env`). Under the
 * `local` profile (the default) none is refused for rate or loops and every
 * result stays within the budget; the denial shows in `ugent stats`. Under
 * `shared` the same session meets the design documents' room limits.
 */
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, assert, describe, it } from "vitest"
import { ugent, workspace } from "../cli/fixture.ts"
import { type CallResult, connect, failureOf, ugentBin } from "./fixtures/connect.ts"

const files = 5

const prepare = () => {
  const root = workspace({ ".env": "SECRET=1\n", "big.txt": `${"x".repeat(99)}\n`.repeat(9_000) })
  for (let i = 0; i < files; i++) writeFileSync(join(root, `f${i}.ts`), `export const v${i} = 0\n`)
  const git = (...args: Array<string>) => execFileSync("git", args, { cwd: root, stdio: "ignore" })
  git("init", "-q")
  git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start")
  return root
}

const start = async (root: string, ...flags: Array<string>) =>
  connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [ugentBin, "mcp", "--root", root, "--trust", "L1", ...flags],
      stderr: "ignore"
    })
  )

interface Step {
  readonly name: string
  readonly arguments: Record<string, unknown>
}

/** The session: per round a read, an edit (no token), a re-read, a status; searches and listings between. */
const session = (): ReadonlyArray<Step> => {
  const steps: Array<Step> = []
  const value = new Array(files).fill(0)
  for (let round = 0; steps.length < 196; round++) {
    const i = round % files
    const path = `f${i}.ts`
    steps.push({ name: "world_tools_file_read", arguments: { path } })
    steps.push({
      name: "world_tools_file_edit",
      arguments: { path, oldText: `= ${value[i]}`, newText: `= ${value[i] + 1}` }
    })
    value[i]++
    steps.push({ name: "world_tools_file_read", arguments: { path } })
    steps.push({ name: "world_tools_git_status", arguments: {} })
    if (round % 4 === 0)
      steps.push({ name: "world_tools_search_grep", arguments: { pattern: "export", outputMode: "count" } })
    if (round % 6 === 0) steps.push({ name: "world_tools_file_list", arguments: { path: "." } })
  }
  steps.length = 196
  steps.splice(50, 0, { name: "world_tools_file_read", arguments: { path: "big.txt" } })
  steps.splice(100, 0, { name: "world_tools_file_read", arguments: { path: ".env" } })
  steps.splice(150, 0, { name: "self_memory_list", arguments: {} })
  steps.push({ name: "world_tools_git_status", arguments: {} })
  return steps
}

const tagOf = (r: CallResult): string => (r.isError !== true ? "ok" : failureOf(r)._tag)

const roots: Array<string> = []
afterAll(() => void roots.splice(0))

describe("an agent's minute over MCP", () => {
  it("local profile: 200 mixed calls, none refused for rate or loops, results bounded, the denial in ugent stats", async () => {
    const root = prepare()
    roots.push(root)
    const client = await start(root)
    const steps = session()
    assert.strictEqual(steps.length, 200)
    const tags: Array<string> = []
    let biggest = 0
    let overBudget = 0
    for (const step of steps) {
      const result = (await client.callTool(step)) as CallResult
      tags.push(tagOf(result))
      const text = JSON.stringify(result.content)
      biggest = Math.max(biggest, text.length)
      if ((result.structuredContent as { overBudget?: boolean } | undefined)?.overBudget === true) overBudget++
    }
    await client.close()
    const refused = tags.filter((t) => t === "RateLimited" || t === "LoopDetected")
    assert.deepStrictEqual(refused, [])
    // The only failure is the secret.
    const failures = tags.map((t, i) => [i, t] as const).filter(([, t]) => t !== "ok")
    assert.strictEqual(failures.length, 1, JSON.stringify(failures))
    assert.strictEqual(steps[failures[0]![0]]!.arguments.path, ".env")
    // Every result is bounded by what the strictest client passes whole (the test client is not one it knows):
    // the 1 MB read came back as a summary in working memory.
    assert.strictEqual(overBudget, 1)
    assert.isAtMost(biggest, 40_000)
    // Every edit landed, through proofs the session remembered.
    for (let i = 0; i < files; i++) {
      assert.match(readFileSync(join(root, `f${i}.ts`), "utf8"), new RegExp(`^export const v${i} = [1-9]`))
    }
    const stats = await ugent(["stats", "--json", "--since", "all"], { cwd: root })
    assert.strictEqual(stats.code, 0, stats.stderr)
    const analytics = JSON.parse(stats.stdout) as {
      totals: { calls: number; refusals: number }
      refusals: ReadonlyArray<{ reason: string; count: number }>
    }
    assert.strictEqual(analytics.totals.calls, 200)
    assert.strictEqual(analytics.totals.refusals, 1)
    assert.strictEqual(analytics.refusals[0]?.count, 1)
  }, 120_000)

  it("shared profile: the same session meets the room's limits", async () => {
    const root = prepare()
    roots.push(root)
    const client = await start(root, "--profile", "shared", "--stores", "memory")
    const tags: Array<string> = []
    const scopes: Array<string> = []
    for (const step of session().slice(0, 40)) {
      const result = (await client.callTool(step)) as CallResult
      tags.push(tagOf(result))
      if (result.isError === true) scopes.push(String(failureOf(result).scope ?? ""))
    }
    await client.close()
    const reads = session()
      .slice(0, 40)
      .map((s, i) => [s.name, tags[i]] as const)
      .filter(([name, tag]) => name === "world_tools_file_read" && tag === "ok")
    // At most 5 reads a minute per caller; 10 calls a minute plus a burst of 3 in all.
    assert.strictEqual(reads.length, 5)
    assert.strictEqual(
      tags.slice(0, 13).filter((t) => t === "RateLimited").length,
      13 - tags.slice(0, 13).filter((t) => t === "ok").length
    )
    assert.isTrue(tags.slice(13).every((t) => t === "RateLimited"))
    assert.includeMembers(scopes, ["tool", "observer"])
  }, 120_000)
})
