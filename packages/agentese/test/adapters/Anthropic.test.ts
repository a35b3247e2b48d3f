/**
 * The raw Anthropic adapter: the tools are exactly the caller's offers
 * (plain, or in strict tool use when asked); a `tool_use` block takes the
 * road and is answered with a `tool_result` block (`is_error` for a failure
 * the model reads); proofs carry across the calls of one conversation only;
 * and the official client sends the definitions unchanged (a replay server).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import Anthropic from "@anthropic-ai/sdk"
import { toAnthropicTools } from "@ugent/agentese/adapters/anthropic"
import { Effect } from "effect"
import { assert, describe, it } from "vitest"
import { serve } from "../providers/fixture.ts"
import { audited, offeredNames, runtime, workspace } from "./fixture.ts"

const tagOf = (content: string) => (JSON.parse(content) as { readonly _tag?: string })._tag

describe("toAnthropicTools", () => {
  it("offers exactly the caller's paths", async () => {
    const root = workspace()
    for (const [trust, deny] of [
      [0, []],
      [1, []],
      [1, ["world.tools.git.*"]]
    ] as const) {
      const rt = runtime(root, { trust, recipe: { deny: [...deny] } })
      await using tools = await toAnthropicTools({ runtime: rt })
      assert.deepStrictEqual(
        tools.tools.map((t) => t.name),
        await offeredNames(rt)
      )
      assert.strictEqual(
        tools.tools.some((t) => t.name === "world_tools_git_log"),
        deny.length === 0
      )
    }
  })

  it("defines plain tools by default, and strict tool use when asked", async () => {
    const rt = runtime(workspace())
    await using plain = await toAnthropicTools({ runtime: rt })
    const read = plain.tools.find((t) => t.name === "world_tools_file_read")!
    assert.isUndefined(read.strict)
    assert.deepStrictEqual(read.input_schema.required, ["path"])
    await using strict = await toAnthropicTools({ runtime: rt, strict: true })
    const strictRead = strict.tools.find((t) => t.name === "world_tools_file_read")!
    assert.isTrue(strictRead.strict)
    assert.strictEqual((strictRead.input_schema as { additionalProperties?: unknown }).additionalProperties, false)
  })

  it("answers a tool_use block on the road, a refusal as an is_error result, both audited", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    const rt = runtime(root, { trust: 1, writable: ["*.md"] })
    await using tools = await toAnthropicTools({ runtime: rt })
    const ok = await tools.handleToolUse({ id: "toolu_1", name: "world_tools_file_read", input: { path: "notes.md" } })
    assert.deepStrictEqual(Object.keys(ok).sort(), ["content", "tool_use_id", "type"])
    assert.strictEqual(ok.tool_use_id, "toolu_1")
    assert.strictEqual((JSON.parse(ok.content) as { content: string }).content, "1\ttea")
    const refused = await tools.handleToolUse({
      id: "toolu_2",
      name: "world_tools_file_write",
      input: { path: "run.sh", content: "rm -rf ~" }
    })
    assert.isTrue(refused.is_error)
    assert.strictEqual(tagOf(refused.content), "TrustDenied")
    assert.isTrue((await audited(rt, "world.tools.file.read")).some((r) => r.status === "success"))
    assert.isTrue((await audited(rt, "world.tools.file.write")).some((r) => r.error?.tag === "TrustDenied"))
    // Input as JSON text (a streamed block's partial JSON, assembled) is read the same way.
    const text = await tools.handleToolCall("world_tools_file_read", '{"path":"notes.md"}')
    assert.strictEqual((JSON.parse(text) as { content: string }).content, "1\ttea")
  })

  it("carries read proofs across the calls of one conversation, not into another", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    const rt = runtime(root, { trust: 1 })
    const write = { id: "w", name: "world_tools_file_write", input: { path: "notes.md", content: "coffee\n" } }
    {
      await using tools = await toAnthropicTools({ runtime: rt })
      await tools.handleToolUse({ id: "r", name: "world_tools_file_read", input: { path: "notes.md" } })
      assert.isUndefined((await tools.handleToolUse(write)).is_error)
    }
    assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "coffee\n")
    await using other = await toAnthropicTools({ runtime: rt })
    assert.strictEqual(tagOf((await other.handleToolUse(write)).content), "ProofRejected")
  })

  it("the official client sends the tools unchanged and the tool_result back", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    await using tools = await toAnthropicTools({ runtime: runtime(root) })
    const message = (stop: string, content: ReadonlyArray<unknown>) => ({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "replayed",
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 }
    })
    const answers = [
      message("tool_use", [
        { type: "tool_use", id: "toolu_1", name: "world_tools_file_read", input: { path: "notes.md" } }
      ]),
      message("end_turn", [{ type: "text", text: "It says tea." }])
    ]
    const received = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(
          serve((_, i) => ({ json: answers[Math.min(i, answers.length - 1)] })),
          (server) =>
            Effect.promise(async () => {
              const client = new Anthropic({ apiKey: "replay", baseURL: server.url, maxRetries: 0 })
              const messages: Array<Anthropic.MessageParam> = [{ role: "user", content: "What does notes.md say?" }]
              for (let step = 0; step < 5; step++) {
                const reply = await client.messages.create({
                  model: "replayed",
                  max_tokens: 256,
                  messages,
                  tools: tools.tools
                })
                messages.push({ role: "assistant", content: reply.content })
                const uses = reply.content.filter((b) => b.type === "tool_use")
                if (uses.length === 0) break
                messages.push({ role: "user", content: await Promise.all(uses.map(tools.handleToolUse)) })
              }
              return server.received
            })
        )
      )
    )
    assert.strictEqual(received.length, 2)
    assert.deepStrictEqual(received[0]!.body.tools, tools.tools)
    const result = (received[1]!.body.messages as Array<{ content: unknown }>)[2]!.content as Array<{
      type: string
      tool_use_id: string
      content: string
    }>
    assert.strictEqual(result[0]!.type, "tool_result")
    assert.strictEqual(result[0]!.tool_use_id, "toolu_1")
    assert.strictEqual((JSON.parse(result[0]!.content) as { content: string }).content, "1\ttea")
  })
})
