/**
 * The raw OpenAI adapter: the Chat Completions and Responses definitions are
 * exactly the caller's offers, in strict mode where a path allows it; a
 * model's call (strict arguments, plain ones, malformed text, a path it was
 * not offered) takes the road and comes back as text the model reads; proofs
 * carry across the calls of one conversation only; and the official client
 * sends the definitions unchanged and the answers back (a replay server).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { toOpenAiTools } from "@ugent/agentese/adapters/openai"
import { Effect } from "effect"
import OpenAI from "openai"
import type { ResponseInputItem } from "openai/resources/responses/responses"
import { assert, describe, it } from "vitest"
import { type Answer, type Received, serve } from "../providers/fixture.ts"
import { audited, offeredNames, runtime, workspace } from "./fixture.ts"

const tagOf = (content: string) => (JSON.parse(content) as { readonly _tag?: string })._tag

/** Runs `f` with a replay server answering from `answer`. */
const withServer = <A>(
  answer: (request: Received, index: number) => Answer,
  f: (server: { readonly url: string; readonly received: Array<Received> }) => Promise<A>
): Promise<A> => Effect.runPromise(Effect.scoped(Effect.flatMap(serve(answer), (s) => Effect.promise(() => f(s)))))

/** Whether a schema is in OpenAI's strict subset at its root: closed, every property required. */
const isStrictRoot = (schema: { readonly properties?: object; readonly required?: ReadonlyArray<string> }) =>
  (schema as { additionalProperties?: unknown }).additionalProperties === false &&
  Object.keys(schema.properties ?? {}).every((key) => schema.required?.includes(key))

describe("toOpenAiTools", () => {
  it("offers exactly the caller's paths, in both APIs' shapes", async () => {
    const root = workspace()
    for (const [trust, deny] of [
      [0, []],
      [1, []],
      [1, ["world.tools.file.*"]]
    ] as const) {
      const rt = runtime(root, { trust, recipe: { deny: [...deny] } })
      await using tools = await toOpenAiTools({ runtime: rt })
      const names = await offeredNames(rt)
      assert.deepStrictEqual(
        tools.chatCompletions.map((t) => t.function.name),
        names
      )
      assert.deepStrictEqual(
        tools.responses.map((t) => t.name),
        names
      )
      assert.strictEqual(names.includes("world_tools_file_write"), trust === 1 && deny.length === 0)
    }
  })

  it("defines strict tools where the input allows it, and plain ones when asked", async () => {
    const rt = runtime(workspace(), { trust: 1 })
    await using strict = await toOpenAiTools({ runtime: rt })
    const read = strict.responses.find((t) => t.name === "world_tools_file_read")!
    assert.isTrue(read.strict)
    assert.isTrue(isStrictRoot(read.parameters))
    for (const t of strict.responses) if (t.strict) assert.isTrue(isStrictRoot(t.parameters), t.name)
    assert.isAbove(strict.responses.filter((t) => t.strict).length, 10)
    const chatRead = strict.chatCompletions.find((t) => t.function.name === "world_tools_file_read")!
    assert.deepStrictEqual(chatRead.function.parameters, read.parameters)
    await using plain = await toOpenAiTools({ runtime: rt, strict: false })
    const plainRead = plain.responses.find((t) => t.name === "world_tools_file_read")!
    assert.isFalse(plainRead.strict)
    assert.deepStrictEqual(plainRead.parameters.required, ["path"])
  })

  it("runs strict arguments, plain ones, and reports malformed ones as text the model reads", async () => {
    const root = workspace({ "notes.md": "tea\ncoffee\n" })
    const rt = runtime(root)
    await using tools = await toOpenAiTools({ runtime: rt })
    const strictRead = await tools.handleToolCall(
      "world_tools_file_read",
      '{"path":"notes.md","offset":2,"limit":null}'
    )
    assert.strictEqual((JSON.parse(strictRead) as { content: string }).content, "2\tcoffee")
    const plainRead = await tools.handleToolCall("world_tools_file_read", '{"path":"notes.md"}')
    assert.strictEqual((JSON.parse(plainRead) as { content: string }).content, "1\ttea\n2\tcoffee")
    const dotted = await tools.handleToolCall("world.tools.file.read", '{"path":"notes.md","offset":null,"limit":1}')
    assert.strictEqual((JSON.parse(dotted) as { content: string }).content, "1\ttea")
    const malformed = await tools.handleToolCall("world_tools_file_read", '{"path": "notes.md"')
    assert.strictEqual(tagOf(malformed), "InvalidInput")
    const missing = await tools.handleToolCall("world_tools_file_read", '{"offset":null,"limit":null}')
    assert.strictEqual(tagOf(missing), "InvalidInput")
    assert.match(missing, /path/)
  })

  it("runs a call on the road: audited, and a path not offered is refused and recorded", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    const rt = runtime(root)
    await using tools = await toOpenAiTools({ runtime: rt })
    const outcome = await tools.call("world_tools_file_read", '{"path":"notes.md"}')
    assert.isTrue(outcome.ok)
    const reads = await audited(rt, "world.tools.file.read")
    assert.isTrue(reads.some((r) => r.callId === outcome.callId && r.status === "success"))
    // An L0 caller is not offered file.write; a model that calls it anyway reads why, and the refusal is kept.
    assert.isFalse(tools.responses.some((t) => t.name === "world_tools_file_write"))
    const refused = await tools.handleToolCall("world_tools_file_write", '{"path":"notes.md","content":"x"}')
    assert.strictEqual(tagOf(refused), "TrustDenied")
    assert.match(refused, /needs trust L1/)
    const writes = await audited(rt, "world.tools.file.write")
    assert.isTrue(writes.some((r) => r.error?.tag === "TrustDenied"))
    assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "tea\n")
    assert.strictEqual(tagOf(await tools.handleToolCall("world_tools_nothing_here", "{}")), "UnknownPath")
  })

  it("carries read proofs across the calls of one conversation, not into another", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    const rt = runtime(root, { trust: 1 })
    const write = '{"path":"notes.md","content":"coffee\\n","proof":null}'
    {
      await using tools = await toOpenAiTools({ runtime: rt })
      await tools.handleToolCall("world_tools_file_read", '{"path":"notes.md","offset":null,"limit":null}')
      assert.strictEqual(tagOf(await tools.handleToolCall("world_tools_file_write", write)), undefined)
    }
    assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "coffee\n")
    await using other = await toOpenAiTools({ runtime: rt })
    assert.strictEqual(tagOf(await other.handleToolCall("world_tools_file_write", write)), "ProofRejected")
  })

  it("the official client sends the Responses tools unchanged and a function call's output back", async () => {
    const root = workspace({ "notes.md": "tea\n" })
    await using tools = await toOpenAiTools({ runtime: runtime(root) })
    const answers: ReadonlyArray<unknown> = [
      {
        id: "resp_1",
        object: "response",
        created_at: 1,
        status: "completed",
        model: "replayed",
        output: [
          {
            type: "function_call",
            id: "fc_1",
            call_id: "call_1",
            name: "world_tools_file_read",
            arguments: '{"path":"notes.md","offset":null,"limit":null}',
            status: "completed"
          }
        ]
      },
      {
        id: "resp_2",
        object: "response",
        created_at: 2,
        status: "completed",
        model: "replayed",
        output: [
          {
            type: "message",
            id: "msg_1",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: "It says tea.", annotations: [] }]
          }
        ]
      }
    ]
    await withServer(
      (_, i) => ({ json: answers[Math.min(i, answers.length - 1)] }),
      async (server) => {
        const client = new OpenAI({ apiKey: "replay", baseURL: server.url, maxRetries: 0 })
        const input: Array<ResponseInputItem> = [{ role: "user", content: "What does notes.md say?" }]
        for (let step = 0; step < 5; step++) {
          const response = await client.responses.create({ model: "replayed", input, tools: tools.responses })
          const calls = response.output.filter((item) => item.type === "function_call")
          if (calls.length === 0) {
            assert.strictEqual(response.output_text, "It says tea.")
            break
          }
          for (const call of calls) {
            input.push(call, {
              type: "function_call_output",
              call_id: call.call_id,
              output: await tools.handleToolCall(call.name, call.arguments)
            })
          }
        }
        assert.strictEqual(server.received.length, 2)
        assert.deepStrictEqual(server.received[0]!.body.tools, tools.responses)
        const sent = (server.received[1]!.body.input as Array<{ type?: string; output?: string }>).find(
          (item) => item.type === "function_call_output"
        )
        assert.strictEqual((JSON.parse(sent!.output!) as { content: string }).content, "1\ttea")
      }
    )
  })
})
