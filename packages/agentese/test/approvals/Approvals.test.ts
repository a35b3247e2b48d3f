/**
 * One human channel on every projection: an L2 write (a confirmation) and a
 * recipe's requireApproval wait for a person, reached through MCP
 * elicitation, the HTTP pending questions, or the terminal. An approval
 * cannot be skipped, a timeout or a refusal denies, and nothing the agent
 * itself can call answers.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { afterEach, assert, describe, it } from "vitest"
import { bin } from "../cli/fixture.ts"
import { serve } from "../http/fixture.ts"
import { ugentBin } from "../mcp/fixtures/connect.ts"

const made: Array<string> = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})
/** A workspace whose recipe raises file.write to L2: an L2 caller's writes are then each confirmed. */
const workspace = () => {
  const root = mkdtempSync(join(tmpdir(), "ugent-approve-"))
  made.push(root)
  writeFileSync(join(root, "a.txt"), "alpha\n")
  writeFileSync(join(root, "l2.json"), JSON.stringify(raised))
  return root
}
const raised = { minTrust: { "world.tools.file.write": 2 as const } }

/** An MCP client over stdio to `ugent mcp`, answering elicitations with `answer` (or not able to). */
const mcpClient = async (root: string, answer: "approve" | "deny" | "unsupported", ...flags: Array<string>) => {
  const client = new Client(
    { name: "approver", version: "0" },
    { capabilities: answer === "unsupported" ? {} : { elicitation: {} } }
  )
  const asked: Array<string> = []
  if (answer !== "unsupported") {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message)
      return { action: "accept", content: { answer } }
    })
  }
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [ugentBin, "mcp", "--root", root, "--stores", "memory", ...flags],
      stderr: "ignore"
    })
  )
  return { client, asked }
}

// biome-ignore lint/suspicious/noExplicitAny: the SDK's result union; the failure's JSON is read field by field
const tagOf = (result: any): { _tag: string; reason?: string } =>
  result.isError === true ? result._meta["ugent/error"] : { _tag: "ok" }

describe("approvals on every projection", () => {
  describe("MCP: elicitation", () => {
    it("an L2 write asks the user; approved, it runs", async () => {
      const root = workspace()
      const { client, asked } = await mcpClient(root, "approve", "--trust", "L2", "--recipe", join(root, "l2.json"))
      const r = await client.callTool({ name: "world_tools_file_write", arguments: { path: "new.txt", content: "x" } })
      await client.close()
      assert.strictEqual(tagOf(r)._tag, "ok")
      assert.strictEqual(asked.length, 1)
      assert.match(asked[0]!, /world\.tools\.file\.write/)
      assert.strictEqual(readFileSync(join(root, "new.txt"), "utf8"), "x")
    }, 60_000)

    it("denied, nothing is written; a client that cannot elicit is told at once that the request is pending", async () => {
      const root = workspace()
      const denying = await mcpClient(root, "deny", "--trust", "L2", "--recipe", join(root, "l2.json"))
      const r = await denying.client.callTool({
        name: "world_tools_file_write",
        arguments: { path: "new.txt", content: "x" }
      })
      await denying.client.close()
      assert.deepStrictEqual([tagOf(r)._tag, tagOf(r).reason], ["ApprovalDenied", "denied"])
      const plain = await mcpClient(root, "unsupported", "--trust", "L2", "--recipe", join(root, "l2.json"))
      const p = await plain.client.callTool({
        name: "world_tools_file_write",
        arguments: { path: "new.txt", content: "x" }
      })
      await plain.client.close()
      assert.deepStrictEqual([tagOf(p)._tag, tagOf(p).reason], ["ApprovalPending", "no-channel"])
      assert.throws(() => readFileSync(join(root, "new.txt")))
    }, 60_000)

    it("a recipe's requireApproval asks even at L3, and a read too", async () => {
      const root = workspace()
      writeFileSync(join(root, "recipe.json"), JSON.stringify({ requireApproval: ["world.tools.file.read"] }))
      const { client, asked } = await mcpClient(root, "deny", "--trust", "L3", "--recipe", join(root, "recipe.json"))
      const r = await client.callTool({ name: "world_tools_file_read", arguments: { path: "a.txt" } })
      await client.close()
      assert.strictEqual(tagOf(r)._tag, "ApprovalDenied")
      assert.strictEqual(asked.length, 1)
    }, 60_000)
  })

  describe("HTTP: pending questions", () => {
    const post = (url: string, body: unknown, token?: string) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body)
      })
    const get = (url: string, token?: string) =>
      fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} })

    it("a write waits for the operator, who answers with the approver's token; the agent's token cannot", async () => {
      const root = workspace()
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const { url } = yield* serve({
              root,
              trust: 2,
              recipe: raised,
              token: "agent-secret",
              approverToken: "operator-secret"
            })
            const call = post(
              `${url}/v1/invoke/world.tools.file.write`,
              { path: "n.txt", content: "y" },
              "agent-secret"
            )
            let questions: Array<{ id: string; kind: string; path: string }> = []
            for (let i = 0; i < 200 && questions.length === 0; i++) {
              yield* Effect.sleep("25 millis")
              const listed = yield* Effect.promise(() => get(`${url}/v1/pending`, "operator-secret"))
              questions = ((yield* Effect.promise(() => listed.json())) as { questions: typeof questions }).questions
            }
            assert.strictEqual(questions[0]?.kind, "approval")
            assert.strictEqual(questions[0]?.path, "world.tools.file.write")
            // The agent's own credentials neither list nor answer.
            const byAgent = yield* Effect.promise(() =>
              post(`${url}/v1/pending/${questions[0]!.id}`, { answer: "approve" }, "agent-secret")
            )
            assert.strictEqual(byAgent.status, 401)
            const answered = yield* Effect.promise(() =>
              post(`${url}/v1/pending/${questions[0]!.id}`, { answer: "approve" }, "operator-secret")
            )
            assert.strictEqual(answered.status, 200)
            const response = yield* Effect.promise(() => call)
            assert.strictEqual(response.status, 200)
            assert.strictEqual(readFileSync(join(root, "n.txt"), "utf8"), "y")
          })
        )
      )
    }, 60_000)

    it("threat: GET /v1/pending answers 500 with an empty body while a waiting write holds a read proof", async () => {
      const root = workspace()
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const { url } = yield* serve({
              root,
              trust: 2,
              recipe: raised,
              token: "agent-secret",
              approverToken: "operator-secret"
            })
            const read = yield* Effect.promise(() =>
              post(`${url}/v1/invoke/world.tools.file.read`, { path: "a.txt" }, "agent-secret").then((r) => r.json())
            )
            const proof = (read as { result: { proof: string } }).result.proof
            const call = post(
              `${url}/v1/invoke/world.tools.file.write`,
              { path: "a.txt", content: "ALPHA\n", proof },
              "agent-secret"
            )
            let listed: { status: number; body: string } = { status: 0, body: "" }
            for (let i = 0; i < 200 && !listed.body.includes("approval"); i++) {
              yield* Effect.sleep("25 millis")
              const r = yield* Effect.promise(() => get(`${url}/v1/pending`, "operator-secret"))
              listed = { status: r.status, body: yield* Effect.promise(() => r.text()) }
              if (r.status !== 200) break
            }
            assert.strictEqual(listed.status, 200, listed.body)
            const [question] = (JSON.parse(listed.body) as { questions: Array<Record<string, unknown>> }).questions
            // The proof is shown as its token, and the arguments in one line a person reads.
            assert.deepStrictEqual(question!.input, { path: "a.txt", content: "ALPHA\n", proof })
            assert.strictEqual(question!.arguments, 'path: "a.txt", content: "ALPHA\\n", proof: rp1.…')
            yield* Effect.promise(() =>
              post(`${url}/v1/pending/${question!.id}`, { answer: "approve" }, "operator-secret")
            )
            assert.strictEqual((yield* Effect.promise(() => call)).status, 200)
            assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "ALPHA\n")
          })
        )
      )
    }, 60_000)

    it("without an approver's token no answer is taken over HTTP: a call that needs one is refused at once, pending", async () => {
      const root = workspace()
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const { url } = yield* serve({ root, trust: 2, recipe: raised, token: "agent-secret" })
            const listed = yield* Effect.promise(() => get(`${url}/v1/pending`, "agent-secret"))
            assert.strictEqual(listed.status, 403)
            const r = yield* Effect.promise(() =>
              post(`${url}/v1/invoke/world.tools.file.write`, { path: "n.txt", content: "y" }, "agent-secret")
            )
            const body = (yield* Effect.promise(() => r.json())) as { error: { _tag: string; reason: string } }
            assert.deepStrictEqual(
              [r.status, body.error._tag, body.error.reason],
              [403, "ApprovalPending", "no-channel"]
            )
          })
        )
      )
    }, 60_000)

    it("an approval nobody answers in time is refused, naming the request that stays pending", async () => {
      const root = workspace()
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const { url } = yield* serve({
              root,
              trust: 2,
              recipe: raised,
              approverToken: "operator-secret",
              approvalTimeout: "1 second"
            })
            const r = yield* Effect.promise(() =>
              post(`${url}/v1/invoke/world.tools.file.write`, { path: "n.txt", content: "y" })
            )
            const body = (yield* Effect.promise(() => r.json())) as {
              error: { _tag: string; reason: string; id: string; message: string }
            }
            assert.deepStrictEqual([r.status, body.error._tag, body.error.reason], [403, "ApprovalPending", "timeout"])
            // The server keeps its requests in memory: the message names the way that reaches them, not ugent approve.
            assert.include(body.error.message, `POST /v1/pending/${body.error.id}`)
            assert.include(body.error.message, "`ugent approve` cannot reach them")
            assert.throws(() => readFileSync(join(root, "n.txt")))
          })
        )
      )
    }, 60_000)
  })

  describe("CLI: the terminal", () => {
    /** Runs `ugent` under a pseudo-terminal (script), typing `typed` after a pause. */
    const onTerminal = (root: string, args: ReadonlyArray<string>, typed: string) =>
      new Promise<string>((resolve) => {
        const command = [process.execPath, bin, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ")
        const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: root })
        let out = ""
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString()
          if (out.includes("Approve?") && typed !== "") {
            child.stdin.write(`${typed}\n`)
            typed = ""
          }
        })
        child.on("close", () => resolve(out))
      })

    it("asks on the terminal; yes runs the write, no refuses it", async () => {
      const root = workspace()
      const yes = await onTerminal(
        root,
        [
          "invoke",
          "world.tools.file.write",
          "--input",
          '{"path":"t.txt","content":"z"}',
          "--trust",
          "L2",
          "--recipe",
          "l2.json",
          "--stores",
          "memory"
        ],
        "yes"
      )
      assert.match(yes, /Approve\?/)
      // What is being approved is shown before the answer is asked for.
      assert.match(yes, /Arguments:\s+path: t\.txt\s+content: z/)
      assert.strictEqual(readFileSync(join(root, "t.txt"), "utf8"), "z")
      const no = await onTerminal(
        root,
        [
          "invoke",
          "world.tools.file.write",
          "--input",
          '{"path":"u.txt","content":"z"}',
          "--trust",
          "L2",
          "--recipe",
          "l2.json",
          "--stores",
          "memory"
        ],
        "no"
      )
      assert.match(no, /ApprovalDenied/)
      assert.throws(() => readFileSync(join(root, "u.txt")))
    }, 90_000)
  })
})
