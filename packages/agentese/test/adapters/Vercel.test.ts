/**
 * The Vercel AI SDK adapter, driven by the SDK's own `generateText` and its
 * `MockLanguageModelV4`: the tools are exactly the caller's offers, every
 * call takes the road (audited; a refusal comes back as a result the model
 * reads), proofs carry across the calls of one conversation only, and the
 * road's approvals are put to a person through the SDK's approval requests.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { Invoke } from "@ugent/agentese"
import { toVercelTools } from "@ugent/agentese/adapters/vercel"
import { Family, Tool } from "@ugent/core"
import { generateText, type ModelMessage, stepCountIs, type ToolApprovalResponse } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect, Schema } from "effect"
import { assert, describe, it } from "vitest"
import { audited, offeredNames, runtime, workspace } from "./fixture.ts"

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined }
}

type Call = { readonly type: "tool-call"; toolCallId: string; toolName: string; input: string }
type Part = Call | { type: "text"; text: string }

const call = (id: string, name: string, input: unknown): Call => ({
  type: "tool-call",
  toolCallId: id,
  toolName: name,
  input: JSON.stringify(input)
})
const text = (t: string): Part => ({ type: "text", text: t })

/** A model that answers each turn with the next parts of the script (the last one repeats). */
const scripted = (...turns: ReadonlyArray<ReadonlyArray<Part>>) =>
  new MockLanguageModelV4({
    doGenerate: turns.map((content) => ({
      content: [...content],
      finishReason: { unified: content.some((p) => p.type === "tool-call") ? "tool-calls" : "stop", raw: undefined },
      usage,
      warnings: []
    }))
  })

/** The tool results a model was sent, by tool call id, across its calls. */
const sentResults = (model: MockLanguageModelV4) => {
  const results = new Map<string, { readonly type: string; readonly value?: unknown }>()
  for (const c of model.doGenerateCalls) {
    for (const message of c.prompt) {
      if (message.role !== "tool") continue
      for (const part of message.content) {
        if (part.type === "tool-result") results.set(part.toolCallId, part.output as { type: string; value?: unknown })
      }
    }
  }
  return results
}

const failureTag = (output: { readonly type: string; readonly value?: unknown } | undefined) =>
  output?.type === "error-json" ? (output.value as { readonly _tag: string })._tag : undefined

describe("toVercelTools", () => {
  it("offers exactly the caller's paths, under provider-safe names", async () => {
    const root = workspace()
    for (const [trust, deny] of [
      [0, []],
      [1, []],
      [1, ["world.tools.file.write"]]
    ] as const) {
      const rt = runtime(root, { trust, recipe: { deny: [...deny] } })
      await using tools = await toVercelTools({ runtime: rt })
      assert.deepStrictEqual(Object.keys(tools), await offeredNames(rt))
      assert.strictEqual("world_tools_file_write" in tools, trust === 1 && deny.length === 0)
      assert.strictEqual("world_tools_file_read" in tools, true)
    }
  })

  it("runs a model's call on the road: the result goes back to the model, and the call is audited", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    const rt = runtime(root)
    const model = scripted([call("c1", "world_tools_file_read", { path: "notes.md" })], [text("It says tea.")])
    await using tools = await toVercelTools({ runtime: rt })
    const result = await generateText({ model, tools, prompt: "Read notes.md", stopWhen: stepCountIs(5) })
    assert.strictEqual(result.text, "It says tea.")
    const outcome = result.steps[0]!.toolResults[0]!.output as Invoke.Outcome
    assert.isTrue(outcome.ok)
    const sent = sentResults(model).get("c1")
    assert.strictEqual(sent?.type, "json")
    assert.strictEqual((sent?.value as { content?: string } | undefined)?.content, "1\ttea")
    const records = await audited(rt, "world.tools.file.read")
    assert.isTrue(records.some((r) => r.callId === outcome.callId && r.status === "success"))
  })

  it("returns a refusal as a result the model reads, and records it", async () => {
    const root = workspace()
    // An L1 caller may write inside the writable globs only: other.txt needs L2.
    const rt = runtime(root, { trust: 1, writable: ["notes/**"] })
    const model = scripted(
      [call("c1", "world_tools_file_write", { path: "other.txt", content: "x" })],
      [text("I may not write there.")]
    )
    await using tools = await toVercelTools({ runtime: rt })
    const result = await generateText({ model, tools, prompt: "Write other.txt", stopWhen: stepCountIs(5) })
    assert.strictEqual(result.text, "I may not write there.")
    const sent = sentResults(model).get("c1")
    assert.strictEqual(failureTag(sent), "TrustDenied")
    assert.match((sent?.value as { message?: string } | undefined)?.message ?? "", /needs trust L2/)
    assert.isFalse(existsSync(join(root, "other.txt")))
    const records = await audited(rt, "world.tools.file.write")
    assert.isTrue(records.some((r) => r.status !== "success" && r.error?.tag === "TrustDenied"))
  })

  it("carries read proofs across the calls of one conversation, not into another", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    const rt = runtime(root, { trust: 1, writable: ["**"] })
    const write = call("w", "world_tools_file_write", { path: "notes.md", content: "coffee\n" })
    // One conversation: the model read the file, so it may overwrite it without a proof token.
    const reader = scripted([call("r", "world_tools_file_read", { path: "notes.md" })], [write], [text("done")])
    {
      await using tools = await toVercelTools({ runtime: rt })
      await generateText({ model: reader, tools, prompt: "Replace tea", stopWhen: stepCountIs(5) })
    }
    assert.strictEqual(sentResults(reader).get("w")?.type, "json")
    assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "coffee\n")
    // Another conversation never read it: the same write is refused.
    const stranger = scripted([{ ...write, toolCallId: "w2" }], [text("refused")])
    await using tools = await toVercelTools({ runtime: rt })
    await generateText({ model: stranger, tools, prompt: "Replace coffee", stopWhen: stepCountIs(5) })
    assert.strictEqual(failureTag(sentResults(stranger).get("w2")), "ProofRejected")
    assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "coffee\n")
  })

  describe("approval", () => {
    it("marks the calls the road puts to a person: a recipe's requireApproval, an L2 caller's writes", async () => {
      const root = workspace()
      {
        await using tools = await toVercelTools({
          runtime: runtime(root, { trust: 1, recipe: { requireApproval: ["world.tools.file.edit"] } })
        })
        assert.strictEqual(tools.world_tools_file_edit?.needsApproval, true)
        assert.strictEqual(tools.world_tools_file_write?.needsApproval, undefined)
        assert.strictEqual(tools.world_tools_file_read?.needsApproval, undefined)
      }
      await using tools = await toVercelTools({ runtime: runtime(root, { trust: 2 }) })
      assert.strictEqual(tools.world_tools_file_write?.needsApproval, true)
      assert.strictEqual(tools.world_tools_file_read?.needsApproval, undefined)
    })

    it("decides from the input for a level that depends on it, and always for an irreversible tool", async () => {
      const Input = Schema.Struct({ text: Schema.String, shared: Schema.optionalKey(Schema.Boolean) })
      const put = Tool.make({
        name: "note.put",
        description: "Puts a note; a shared one needs L2.",
        trust: 2,
        effects: { writesFs: true },
        input: Input,
        output: Schema.String,
        run: ({ text }) => Effect.succeed(text)
      })
      const burn = Tool.make({
        name: "note.burn",
        description: "Burns the notes.",
        trust: 1,
        effects: { writesFs: true, irreversible: true },
        input: Schema.Struct({}),
        output: Schema.String,
        run: () => Effect.succeed("burnt")
      })
      const notes = Family.make({
        name: "notes",
        prefix: "world.tools",
        tools: { "note.put": put, "note.burn": burn },
        levels: { "note.put": { min: 1, of: (input) => (input.shared === true ? 2 : 1) } }
      })
      await using tools = await toVercelTools({ runtime: runtime(workspace(), { trust: 2, families: [notes] }) })
      const needs = tools.world_tools_note_put?.needsApproval
      assert.isFunction(needs)
      if (typeof needs !== "function") return
      const options = { toolCallId: "c", messages: [], context: {} }
      assert.isTrue(await needs({ text: "a", shared: true }, options))
      assert.isFalse(await needs({ text: "a" }, options))
      assert.strictEqual(tools.world_tools_note_burn?.needsApproval, true)
    })

    /** A model that edits notes.md, which the recipe puts to a person; the server's approver denies (and says whom it asked). */
    const editSetup = () => {
      const root = workspace({ "notes.md": "tea\n" })
      const asked: Array<string> = []
      const rt = runtime(root, {
        trust: 1,
        writable: ["**"],
        recipe: { requireApproval: ["world.tools.file.edit"], rateLimits: { perMinute: 600 } },
        approver: (request) => Effect.sync(() => asked.push(request.tool)).pipe(Effect.as(false))
      })
      const model = scripted(
        [call("r", "world_tools_file_read", { path: "notes.md" })],
        [call("e", "world_tools_file_edit", { path: "notes.md", oldText: "tea", newText: "TEA" })],
        [text("done")]
      )
      return { root, rt, asked, model }
    }

    /** The edit conversation up to the SDK's approval request. */
    const editConversation = async () => {
      const { root, rt, asked, model } = editSetup()
      const tools = await toVercelTools({ runtime: rt })
      const messages: Array<ModelMessage> = [{ role: "user", content: "Shout tea" }]
      const first = await generateText({ model, tools, messages, stopWhen: stepCountIs(5) })
      messages.push(...first.responseMessages)
      const request = first.content.find((p) => p.type === "tool-approval-request")
      return { root, rt, asked, model, tools, messages, first, request }
    }

    it("stops for the person's approval, and a yes runs the call without asking again", async () => {
      const { root, rt, asked, model, tools, messages, first, request } = await editConversation()
      await using _ = tools
      assert.strictEqual(request?.toolCall.toolName, "world_tools_file_edit")
      assert.strictEqual(first.finishReason, "tool-calls")
      assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "tea\n")
      const yes: ToolApprovalResponse = {
        type: "tool-approval-response",
        approvalId: request!.approvalId,
        approved: true
      }
      messages.push({ role: "tool", content: [yes] })
      const second = await generateText({ model, tools, messages, stopWhen: stepCountIs(5) })
      assert.strictEqual(second.text, "done")
      assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "TEA\n")
      // The person's yes answered the road's question: the server's approver (which denies) was not asked.
      assert.deepStrictEqual(asked, [])
      const records = await audited(rt, "world.tools.file.edit")
      assert.isTrue(records.some((r) => r.status === "success"))
    })

    it("a no never reaches the road", async () => {
      const { root, rt, model, tools, messages, request } = await editConversation()
      await using _ = tools
      messages.push({
        role: "tool",
        content: [{ type: "tool-approval-response", approvalId: request!.approvalId, approved: false }]
      })
      await generateText({ model, tools, messages, stopWhen: stepCountIs(5) })
      assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "tea\n")
      assert.deepStrictEqual(await audited(rt, "world.tools.file.edit"), [])
    })

    it("skipping the SDK's approval does not skip the road's: the server's approver decides", async () => {
      const { root, rt, asked, model } = editSetup()
      await using tools = await toVercelTools({ runtime: rt })
      await generateText({
        model,
        tools,
        prompt: "Shout tea",
        toolApproval: { world_tools_file_edit: "not-applicable" },
        stopWhen: stepCountIs(5)
      })
      assert.deepStrictEqual(asked, ["world.tools.file.edit"])
      assert.strictEqual(failureTag(sentResults(model).get("e")), "ApprovalDenied")
      assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "tea\n")
    })
  })

  it("disposing tools built from server options ends their server", async () => {
    const root = workspace({ "a.txt": "a\n" })
    const tools = await toVercelTools({ server: { root, stores: "memory" } })
    const read = tools.world_tools_file_read!
    const options = { toolCallId: "c", messages: [], context: {} }
    const before = (await read.execute!({ path: "a.txt" }, options)) as { ok: boolean }
    assert.isTrue(before.ok)
    await tools[Symbol.asyncDispose]()
    const after = await Promise.resolve(read.execute!({ path: "a.txt" }, options)).then(
      () => "ran",
      () => "refused"
    )
    assert.strictEqual(after, "refused")
  })
})
