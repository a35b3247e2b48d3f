/**
 * The LangChain.js adapter: the tools are exactly the caller's offers and
 * LangChain hands their schemas to a model unchanged, every call takes the
 * road (audited; a refusal is an error `ToolMessage` the model reads),
 * proofs carry across the calls of one conversation only, and a call that
 * needs approval asks the server's approver.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Invoke } from "@ugent/agentese"
import { toLangChainTools } from "@ugent/agentese/adapters/langchain"
import { AIMessageChunk, type ToolCall, type ToolMessage } from "@langchain/core/messages"
import { convertToOpenAITool } from "@langchain/core/utils/function_calling"
import { FakeStreamingChatModel } from "@langchain/core/utils/testing"
import { Effect } from "effect"
import { assert, describe, it } from "vitest"
import { audited, offeredNames, runtime, workspace } from "./fixture.ts"

type Tools = Awaited<ReturnType<typeof toLangChainTools>>

/** Invokes a tool by name with a tool call, as an agent loop does. */
const invoke = (tools: Tools, name: string, args: Record<string, unknown>, id = "call_1"): Promise<ToolMessage> => {
  const tool = tools.find((t) => t.name === name)
  if (tool === undefined) throw new Error(`${name} is not offered`)
  const call: ToolCall = { type: "tool_call", id, name, args }
  return tool.invoke(call)
}

const outcomeOf = (message: ToolMessage) => message.artifact as Invoke.Outcome
const tagOf = (message: ToolMessage) => (JSON.parse(String(message.content)) as { readonly _tag?: string })._tag

describe("toLangChainTools", () => {
  it("offers exactly the caller's paths, under provider-safe names", async () => {
    const root = workspace()
    for (const [trust, deny] of [
      [0, []],
      [1, []],
      [1, ["world.tools.file.write"]]
    ] as const) {
      const rt = runtime(root, { trust, recipe: { deny: [...deny] } })
      await using tools = await toLangChainTools({ runtime: rt })
      assert.deepStrictEqual(
        tools.map((t) => t.name),
        await offeredNames(rt)
      )
      assert.strictEqual(
        tools.some((t) => t.name === "world_tools_file_write"),
        trust === 1 && deny.length === 0
      )
    }
  })

  it("hands a model the path's JSON Schema unchanged (LangChain's own conversion, and its fake model's)", async () => {
    const rt = runtime(workspace())
    await using tools = await toLangChainTools({ runtime: rt })
    const read = tools.find((t) => t.name === "world_tools_file_read")!
    const converted = convertToOpenAITool(read)
    assert.strictEqual(converted.function.name, "world_tools_file_read")
    assert.deepStrictEqual(converted.function.parameters, read.schema)
    const properties = (read.schema as { properties: Record<string, unknown> }).properties
    assert.includeMembers(Object.keys(properties), ["path", "offset", "limit"])
    // The fake chat model binds the tools the way a provider's chat model does, and calls them by name.
    const model = new FakeStreamingChatModel({
      chunks: [
        new AIMessageChunk({
          content: "",
          tool_calls: [{ type: "tool_call", id: "c1", name: read.name, args: { path: "a.txt" } }]
        })
      ]
    })
    const reply = await model.bindTools([...tools]).invoke("read a.txt")
    assert.strictEqual(reply.tool_calls?.[0]?.name, "world_tools_file_read")
  })

  it("runs a call on the road and answers with a ToolMessage whose artifact is the audited outcome", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    const rt = runtime(root)
    await using tools = await toLangChainTools({ runtime: rt })
    const message = await invoke(tools, "world_tools_file_read", { path: "notes.md" }, "call_7")
    assert.strictEqual(message.status, "success")
    assert.strictEqual(message.tool_call_id, "call_7")
    assert.strictEqual((JSON.parse(String(message.content)) as { content: string }).content, "1\ttea")
    const outcome = outcomeOf(message)
    assert.isTrue(outcome.ok)
    const records = await audited(rt, "world.tools.file.read")
    assert.isTrue(records.some((r) => r.callId === outcome.callId && r.status === "success"))
    // Invoked with plain arguments (no tool call), a tool answers with the content text.
    const plain = await tools.find((t) => t.name === "world_tools_file_read")!.invoke({ path: "notes.md" })
    assert.strictEqual((JSON.parse(String(plain)) as { content: string }).content, "1\ttea")
  })

  it("answers a refusal with an error ToolMessage the model reads, and records it", async () => {
    const root = workspace()
    const rt = runtime(root, { trust: 1, writable: ["notes/**"] })
    await using tools = await toLangChainTools({ runtime: rt })
    const message = await invoke(tools, "world_tools_file_write", { path: "other.txt", content: "x" })
    assert.strictEqual(message.status, "error")
    assert.strictEqual(tagOf(message), "TrustDenied")
    assert.match(String(message.content), /needs trust L2/)
    const records = await audited(rt, "world.tools.file.write")
    assert.isTrue(records.some((r) => r.callId === outcomeOf(message).callId && r.error?.tag === "TrustDenied"))
  })

  it("carries read proofs across the calls of one conversation, not into another", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    const rt = runtime(root, { trust: 1 })
    {
      await using tools = await toLangChainTools({ runtime: rt })
      await invoke(tools, "world_tools_file_read", { path: "notes.md" })
      const written = await invoke(tools, "world_tools_file_write", { path: "notes.md", content: "coffee\n" })
      assert.strictEqual(written.status, "success")
    }
    assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "coffee\n")
    await using other = await toLangChainTools({ runtime: rt })
    const refused = await invoke(other, "world_tools_file_write", { path: "notes.md", content: "tea\n" })
    assert.strictEqual(tagOf(refused), "ProofRejected")
    // A session named by the caller is shared by the tools built with it.
    await using first = await toLangChainTools({ runtime: rt, session: "thread-1" })
    await using second = await toLangChainTools({ runtime: rt, session: "thread-1" })
    await invoke(first, "world_tools_file_read", { path: "notes.md" })
    const shared = await invoke(second, "world_tools_file_write", { path: "notes.md", content: "tea\n" })
    assert.strictEqual(shared.status, "success")
  })

  it("puts a call that needs approval to the server's approver (LangChain has no approval step)", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    const asked: Array<string> = []
    const answers = [false, true]
    // The recipe raises file.write to L2: each write of this L2 caller is confirmed.
    const rt = runtime(root, {
      trust: 2,
      recipe: { minTrust: { "world.tools.file.write": 2 } },
      approver: (request) =>
        Effect.sync(() => {
          asked.push(request.tool)
          return answers.shift() ?? false
        })
    })
    await using tools = await toLangChainTools({ runtime: rt })
    assert.strictEqual(tools.find((t) => t.name === "world_tools_file_write")!.metadata?.["ugent/approval"], true)
    assert.strictEqual(tools.find((t) => t.name === "world_tools_file_read")!.metadata?.["ugent/approval"], false)
    await invoke(tools, "world_tools_file_read", { path: "notes.md" })
    const no = await invoke(tools, "world_tools_file_write", { path: "notes.md", content: "x\n" })
    assert.strictEqual(no.status, "error")
    assert.strictEqual(tagOf(no), "ApprovalDenied")
    const yes = await invoke(tools, "world_tools_file_write", { path: "notes.md", content: "coffee\n" })
    assert.strictEqual(yes.status, "success")
    assert.deepStrictEqual(asked, ["world.tools.file.write", "world.tools.file.write"])
    assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "coffee\n")
  })
})
