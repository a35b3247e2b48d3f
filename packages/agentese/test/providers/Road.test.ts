/**
 * A provider and the road together: a model behind a test server calls a
 * served path through the `effect/ai` Toolkit projection, the call runs
 * through `invoke`, and its result goes back to the model in the next turn.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Server, Toolkit } from "@ugent/agentese"
import { OpenAiChat } from "@ugent/agentese/providers"
import { Effect, Layer } from "effect"
import { LanguageModel, Prompt } from "effect/ai"
import { type Answer, fastRetry, serve, withFetch } from "./fixture.ts"

const workspace = Effect.acquireRelease(
  Effect.sync(() => {
    const root = mkdtempSync(join(tmpdir(), "ugent-providers-"))
    writeFileSync(join(root, "notes.md"), "alpha\nbeta\n")
    return root
  }),
  (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

const completion = (message: Record<string, unknown>, finish: string) => ({
  id: "chatcmpl-road",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", refusal: null, ...message }, finish_reason: finish }]
})

const callRead = (args: string): Answer => ({
  json: completion(
    {
      content: null,
      tool_calls: [{ id: "call_read", type: "function", function: { name: "world_tools_file_read", arguments: args } }]
    },
    "tool_calls"
  )
})

describe("a provider on the road", () => {
  it.live("a model's call of a served path runs through invoke, and its result is the next turn's tool message", () =>
    Effect.gen(function* () {
      const root = yield* workspace
      const server = yield* serve((_, i) =>
        i === 0 ? callRead('{"path": "notes.md"}') : { json: completion({ content: "It says alpha." }, "stop") }
      )
      const model = withFetch(OpenAiChat.layer({ model: "gpt-4o-mini", baseUrl: `${server.url}/v1`, retry: fastRetry }))
      const text = yield* Effect.gen(function* () {
        const toolkit = yield* Toolkit.fromInvoker
        const first = yield* LanguageModel.generateText({ prompt: "What does notes.md say?", toolkit })
        const history = Prompt.concat(Prompt.make("What does notes.md say?"), Prompt.fromResponseParts(first.content))
        const second = yield* LanguageModel.generateText({ prompt: history, toolkit })
        return second.text
      }).pipe(
        Effect.provide(
          Layer.merge(model, Server.layer({ root, trust: 0, stores: "memory", observerId: "providers-test" }))
        )
      )
      assert.strictEqual(text, "It says alpha.")
      const offered = server.received[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)
      assert.include(offered, "world_tools_file_read")
      assert.notInclude(offered, "world_tools_file_write")
      const result = server.received[1]!.body.messages.find((m: { role: string }) => m.role === "tool")
      assert.strictEqual(result.tool_call_id, "call_read")
      assert.include(result.content, "alpha")
    })
  )

  it.live("arguments that are not JSON come back to the model as a failed call it can correct", () =>
    Effect.gen(function* () {
      const root = yield* workspace
      const server = yield* serve((_, i) =>
        i === 0 ? callRead('{"path": "notes.md"') : { json: completion({ content: "Sorry." }, "stop") }
      )
      const model = withFetch(OpenAiChat.layer({ model: "gpt-4o-mini", baseUrl: `${server.url}/v1`, retry: fastRetry }))
      const first = yield* Effect.gen(function* () {
        const toolkit = yield* Toolkit.fromInvoker
        return yield* LanguageModel.generateText({ prompt: "Read notes.md", toolkit })
      }).pipe(
        Effect.provide(
          Layer.merge(model, Server.layer({ root, trust: 0, stores: "memory", observerId: "providers-test" }))
        )
      )
      // The raw text reaches the road as the arguments, which refuses it with a message the model can act on.
      const result = first.toolResults[0]!
      assert.isTrue(result.isFailure)
      assert.match(JSON.stringify(result.result), /InvalidInput.*call again/)
    })
  )
})
