/**
 * Approvals bound to bytes, answered any time: a request is stored with the
 * call's arguments, its diff and the hashes of the files it writes; it
 * survives the server (a real restart of `ugent mcp` between the question
 * and the answer); it is answered from any channel (`ugent approve`, HTTP
 * `/v1/pending`, MCP elicitation); the approved call runs exactly the
 * approved bytes, once, and a file changed in between is refused with the
 * new diff to approve.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { afterEach, assert, describe, it } from "vitest"
import { ugent } from "../cli/fixture.ts"
import { get, post, serve } from "../http/fixture.ts"
import { ugentBin } from "../mcp/fixtures/connect.ts"

const made: Array<string> = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A workspace whose recipe raises file.edit and file.write to L2: an L2 caller's edits are each confirmed. */
const workspace = (recipe: Record<string, unknown> = {}) => {
  const root = mkdtempSync(join(tmpdir(), "ugent-stored-"))
  made.push(root)
  writeFileSync(join(root, "a.txt"), "alpha\nbeta\n")
  writeFileSync(
    join(root, "l2.json"),
    JSON.stringify({ minTrust: { "world.tools.file.edit": 2, "world.tools.file.write": 2 }, ...recipe })
  )
  return root
}

/** `ugent mcp` on the workspace's SQLite store, over stdio, with a client that elicits (answering `answer`) or not. */
const mcp = async (root: string, answer?: "approve" | "deny") => {
  const client = new Client(
    { name: "agent", version: "0" },
    { capabilities: answer === undefined ? {} : { elicitation: {} } }
  )
  const asked: Array<string> = []
  if (answer !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message)
      return { action: "accept", content: { answer } }
    })
  }
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [ugentBin, "mcp", "--root", root, "--trust", "L2", "--recipe", join(root, "l2.json")],
      stderr: "ignore"
    })
  )
  return { client, asked }
}

// biome-ignore lint/suspicious/noExplicitAny: the SDK's result union; the failure's JSON is read field by field
type Json = any
const errorOf = (result: Json): Json => (result.isError === true ? result._meta["ugent/error"] : { _tag: "ok" })

/** Reads a.txt (a fresh proof, as an agent would after a restart) and asks for the same edit. */
const edit = async (client: Client, oldText = "alpha", newText = "ALPHA") => {
  const read: Json = await client.callTool({ name: "world_tools_file_read", arguments: { path: "a.txt" } })
  const proof = read.structuredContent?.proof ?? read._meta?.["ugent/result"]?.proof
  assert.isString(proof, JSON.stringify(read).slice(0, 400))
  return client.callTool({ name: "world_tools_file_edit", arguments: { path: "a.txt", proof, oldText, newText } })
}

describe("approvals bound to bytes, answered any time", () => {
  it("an approval answered after a server restart runs exactly the approved bytes, once", async () => {
    const root = workspace()
    // 1. The agent's client cannot elicit: the edit is refused at once, pending under an id.
    const first = await mcp(root)
    const pending = errorOf(await edit(first.client))
    await first.client.close()
    assert.strictEqual(pending._tag, "ApprovalPending", JSON.stringify(pending))
    assert.match(pending.message, new RegExp(`ugent approve ${pending.id}`))
    assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "alpha\nbeta\n")
    // 2. The server is gone; a person lists and answers from the terminal, against the workspace's store.
    const listed = await ugent(["approve", "--root", root, "--json"], { cwd: root })
    const requests = JSON.parse(listed.stdout).pending as Array<Json>
    assert.deepStrictEqual(
      requests.map((r) => [r.id, r.tool]),
      [[pending.id, "world.tools.file.edit"]]
    )
    assert.match(requests[0].preview, /-alpha\n\+ALPHA/)
    assert.strictEqual(requests[0].files[0].path, "a.txt")
    const approved = await ugent(["approve", pending.id, "--root", root], { cwd: root })
    assert.strictEqual(approved.code, 0, approved.stderr)
    assert.match(approved.stdout, /Approved/)
    // 3. A new server: the same call runs without asking, and writes what was shown.
    const second = await mcp(root, "deny")
    const ran = errorOf(await edit(second.client))
    assert.strictEqual(ran._tag, "ok", JSON.stringify(ran))
    assert.strictEqual(second.asked.length, 0)
    assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "ALPHA\nbeta\n")
    // 4. An approval runs once: the next call of the same arguments (on other bytes now) is asked again.
    writeFileSync(join(root, "a.txt"), "alpha\nbeta\n")
    const again = errorOf(await edit(second.client))
    await second.client.close()
    assert.strictEqual(again._tag, "ApprovalDenied")
    assert.strictEqual(second.asked.length, 1)
  }, 120_000)

  it("an approval whose file changed in between is refused with the new diff, and nothing is written", async () => {
    const root = workspace()
    const first = await mcp(root)
    const pending = errorOf(await edit(first.client))
    await first.client.close()
    const approved = await ugent(["approve", pending.id, "--root", root], { cwd: root })
    assert.strictEqual(approved.code, 0, approved.stderr)
    // A person changes the file after the approval.
    writeFileSync(join(root, "a.txt"), "alpha\nbeta\ngamma\n")
    const second = await mcp(root)
    const stale = errorOf(await edit(second.client))
    assert.strictEqual(stale._tag, "ApprovalStale", JSON.stringify(stale))
    assert.strictEqual(stale.id, pending.id)
    assert.deepStrictEqual(stale.files, ["a.txt"])
    assert.match(stale.preview, /\+gamma|gamma/)
    assert.match(stale.message, new RegExp(`ugent approve ${stale.pending}`))
    assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "alpha\nbeta\ngamma\n")
    // The new diff, approved, runs on the new bytes.
    const again = await ugent(["approve", stale.pending, "--root", root], { cwd: root })
    assert.strictEqual(again.code, 0, again.stderr)
    const ran = errorOf(await edit(second.client))
    await second.client.close()
    assert.strictEqual(ran._tag, "ok", JSON.stringify(ran))
    assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "ALPHA\nbeta\ngamma\n")
  }, 120_000)

  it("a request filed before a restart is asked again through elicitation under the same id, and runs once approved", async () => {
    const root = workspace()
    const first = await mcp(root)
    const pending = errorOf(await edit(first.client))
    await first.client.close()
    const second = await mcp(root, "approve")
    const ran = errorOf(await edit(second.client))
    await second.client.close()
    assert.strictEqual(ran._tag, "ok", JSON.stringify(ran))
    assert.strictEqual(second.asked.length, 1)
    assert.include(second.asked[0], `Request ${pending.id}`)
    assert.include(second.asked[0], "-alpha")
    const answered = await ugent(["approve", pending.id, "--root", root], { cwd: root })
    assert.strictEqual(answered.code, 1)
    assert.match(answered.stderr, /AlreadyAnswered: .*already answered through mcp-elicitation/)
  }, 120_000)

  it("bad input: ugent approve of an unknown, expired or already answered id is a typed refusal", async () => {
    const root = workspace({ approvalExpirySeconds: 1 })
    const unknown = await ugent(["approve", "ap-nothing", "--root", root, "--json"], { cwd: root })
    assert.strictEqual(unknown.code, 1)
    assert.strictEqual(JSON.parse(unknown.stdout).error._tag, "UnknownApproval")
    const first = await mcp(root)
    const expiring = errorOf(await edit(first.client))
    const other = errorOf(await edit(first.client, "beta", "BETA"))
    await first.client.close()
    assert.strictEqual(other._tag, "ApprovalPending")
    await new Promise((r) => setTimeout(r, 1_200))
    const expired = await ugent(["approve", expiring.id, "--root", root, "--json"], { cwd: root })
    assert.strictEqual(expired.code, 1)
    assert.strictEqual(JSON.parse(expired.stdout).error._tag, "ApprovalExpired")
    assert.strictEqual(JSON.parse(expired.stdout).kind, "conflict")
    const memory = await ugent(["approve", expiring.id, "--root", root, "--stores", "memory"], { cwd: root })
    assert.strictEqual(memory.code, 2)
  }, 120_000)

  it("HTTP: a request pending before a restart is listed and answered by GET/POST /v1/pending, once", async () => {
    const root = workspace()
    const options = {
      root,
      trust: 2 as const,
      recipe: { minTrust: { "world.tools.file.write": 2 as const } },
      stores: "sqlite" as const,
      token: "agent-secret",
      approverToken: "operator-secret",
      approvalTimeout: "300 millis" as const
    }
    const agent = { authorization: "Bearer agent-secret" }
    const operator = { authorization: "Bearer operator-secret" }
    const call = (url: string) =>
      post(`${url}/v1/invoke/world.tools.file.write`, { path: "n.txt", content: "new\n" }, agent)
    const id = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { url } = yield* serve(options)
          const r = yield* call(url)
          assert.deepStrictEqual(
            [r.status, r.body.error._tag, r.body.error.reason],
            [403, "ApprovalPending", "timeout"]
          )
          return r.body.error.id as string
        })
      )
    )
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { url } = yield* serve(options)
          const listed = yield* get(`${url}/v1/pending`, operator)
          const question = listed.body.questions.find((q: Json) => q.id === id)
          assert.strictEqual(question?.path, "world.tools.file.write", JSON.stringify(listed.body))
          assert.deepStrictEqual(question.files, [{ path: "n.txt", hash: null }])
          const answered = yield* post(`${url}/v1/pending/${id}`, { answer: "approve" }, operator)
          assert.strictEqual(answered.status, 200, JSON.stringify(answered.body))
          const twice = yield* post(`${url}/v1/pending/${id}`, { answer: "deny" }, operator)
          assert.deepStrictEqual([twice.status, twice.body.error._tag], [409, "AlreadyAnswered"])
          const unknown = yield* post(`${url}/v1/pending/ap-nothing`, { answer: "approve" }, operator)
          assert.strictEqual(unknown.status, 404)
          const ran = yield* call(url)
          assert.strictEqual(ran.status, 200, JSON.stringify(ran.body))
          assert.strictEqual(readFileSync(join(root, "n.txt"), "utf8"), "new\n")
        })
      )
    )
  }, 120_000)

  const pg = process.env.UGENT_PG_URL
  const skipPg = pg === undefined && process.env.CI === undefined
  it.skipIf(skipPg)(
    `PostgreSQL: a request one server filed is listed and approved through another, and runs on the first${skipPg ? " (skipped: UGENT_PG_URL is not set)" : ""}`,
    async () => {
      const root = workspace()
      const options = {
        root,
        trust: 2 as const,
        recipe: { minTrust: { "world.tools.file.write": 2 as const } },
        stores: { pg: pg! },
        token: "agent-secret",
        approverToken: "operator-secret",
        approvalTimeout: "300 millis" as const
      }
      const agent = { authorization: "Bearer agent-secret" }
      const operator = { authorization: "Bearer operator-secret" }
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const a = yield* serve(options)
            const b = yield* serve(options)
            const call = () =>
              post(`${a.url}/v1/invoke/world.tools.file.write`, { path: "n.txt", content: "room\n" }, agent)
            const first = yield* call()
            assert.strictEqual(first.body.error._tag, "ApprovalPending", JSON.stringify(first.body))
            const id = first.body.error.id as string
            const listed = yield* get(`${b.url}/v1/pending`, operator)
            assert.isTrue(
              listed.body.questions.some((q: Json) => q.id === id),
              JSON.stringify(listed.body).slice(0, 500)
            )
            const answered = yield* post(`${b.url}/v1/pending/${id}`, { answer: "approve" }, operator)
            assert.strictEqual(answered.status, 200, JSON.stringify(answered.body))
            const ran = yield* call()
            assert.strictEqual(ran.status, 200, JSON.stringify(ran.body))
            assert.strictEqual(readFileSync(join(root, "n.txt"), "utf8"), "room\n")
          })
        )
      )
    },
    120_000
  )

  it.skipIf(skipPg)(
    `threat: an approval given on one workspace is not used by a server of another workspace on the same store${skipPg ? " (skipped: UGENT_PG_URL is not set)" : ""}`,
    async () => {
      const [one, other] = [workspace(), workspace()]
      const options = (root: string) => ({
        root,
        trust: 2 as const,
        recipe: { minTrust: { "world.tools.file.write": 2 as const } },
        stores: { pg: pg! },
        token: "agent-secret",
        approverToken: "operator-secret",
        approvalTimeout: "300 millis" as const
      })
      const agent = { authorization: "Bearer agent-secret" }
      const operator = { authorization: "Bearer operator-secret" }
      // The same caller, path and arguments, on files with the same bytes (both absent).
      const input = { path: "n.txt", content: `same ${Date.now()}\n` }
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const a = yield* serve(options(one))
            const b = yield* serve(options(other))
            const first = yield* post(`${a.url}/v1/invoke/world.tools.file.write`, input, agent)
            const id = first.body.error.id as string
            yield* post(`${a.url}/v1/pending/${id}`, { answer: "approve" }, operator)
            const elsewhere = yield* post(`${b.url}/v1/invoke/world.tools.file.write`, input, agent)
            assert.strictEqual(elsewhere.body.error?._tag, "ApprovalPending", JSON.stringify(elsewhere.body))
            assert.notStrictEqual(elsewhere.body.error.id, id)
            assert.throws(() => readFileSync(join(other, "n.txt")))
            const here = yield* post(`${a.url}/v1/invoke/world.tools.file.write`, input, agent)
            assert.strictEqual(here.status, 200, JSON.stringify(here.body))
          })
        )
      )
    },
    120_000
  )
})
