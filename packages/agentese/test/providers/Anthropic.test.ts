import { assert, describe, it } from "@effect/vitest"
import { Anthropic } from "@ugent/agentese/providers"
import { Effect, Layer, Schema, Stream } from "effect"
import { LanguageModel, Prompt, type Response, Tool, Toolkit } from "effect/ai"
import { type Event, fastRetry, serve, withFetch } from "./fixture.ts"

const key = "sk-ant-api03-0123456789abcdef"

const GetWeather = Tool.make("get_weather", {
  description: "Get the current weather in a given location",
  parameters: Schema.Struct({ location: Schema.String }),
  success: Schema.Struct({ temperature: Schema.Number }),
  failureMode: "return"
})
const Weather = Toolkit.make(GetWeather)
const handlers = Weather.toLayer({ get_weather: () => Effect.succeed({ temperature: 15 }) })

// The answers below are the documented shapes of POST /v1/messages.
const message = (content: ReadonlyArray<unknown>, stopReason: string) => ({
  id: "msg_01Aq9w938a90dw8q",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content,
  stop_reason: stopReason,
  stop_sequence: null,
  usage: { input_tokens: 472, output_tokens: 89, cache_creation_input_tokens: 20, cache_read_input_tokens: 100 }
})

const toolUse = {
  type: "tool_use",
  id: "toolu_01A09q90qw90lq917835lq9",
  name: "get_weather",
  input: { location: "San Francisco, CA" }
}

const sse = (data: Record<string, unknown>): Event => ({ event: String(data.type), data })

const messageStart = sse({
  type: "message_start",
  message: {
    id: "msg_014p7gG3wDgGV9EUtLvnow3U",
    type: "message",
    role: "assistant",
    model: "claude-opus-4-1-20250805",
    stop_sequence: null,
    usage: { input_tokens: 472, output_tokens: 2 },
    content: [],
    stop_reason: null
  }
})

const model = (url: string, options: Partial<Anthropic.Options> = {}) =>
  withFetch(Anthropic.layer({ model: "claude-sonnet-4-5", apiKey: key, baseUrl: url, retry: fastRetry, ...options }))

describe("Anthropic", () => {
  describe("generateText", () => {
    it.live(
      "sends the key, the version, max_tokens, the system prompt and the tools; maps text, tool use and usage",
      () =>
        Effect.gen(function* () {
          const server = yield* serve(() => ({
            json: message([{ type: "text", text: "I'll check the weather." }, toolUse], "tool_use")
          }))
          const answer = yield* LanguageModel.generateText({
            prompt: [
              { role: "system", content: "Be brief." },
              { role: "user", content: "What's the weather in San Francisco?" }
            ],
            toolkit: Weather
          }).pipe(Effect.provide(Layer.merge(model(server.url), handlers)))
          const sent = server.received[0]!
          assert.strictEqual(sent.path, "/v1/messages")
          assert.strictEqual(sent.headers["x-api-key"], key)
          assert.strictEqual(sent.headers["anthropic-version"], "2023-06-01")
          assert.isUndefined(sent.headers.authorization)
          assert.deepStrictEqual(sent.body, {
            model: "claude-sonnet-4-5",
            max_tokens: 4096,
            system: "Be brief.",
            messages: [{ role: "user", content: [{ type: "text", text: "What's the weather in San Francisco?" }] }],
            tools: [
              {
                name: "get_weather",
                description: "Get the current weather in a given location",
                input_schema: Tool.getJsonSchema(GetWeather)
              }
            ],
            tool_choice: { type: "auto" }
          })
          assert.strictEqual(answer.text, "I'll check the weather.")
          assert.strictEqual(answer.finishReason, "tool-calls")
          assert.deepStrictEqual(
            answer.toolCalls.map((c) => [c.id, c.name, c.params]),
            [["toolu_01A09q90qw90lq917835lq9", "get_weather", { location: "San Francisco, CA" }]]
          )
          assert.deepStrictEqual(answer.toolResults[0]!.result, { temperature: 15 })
          assert.strictEqual(answer.usage.inputTokens.total, 592)
          assert.strictEqual(answer.usage.inputTokens.uncached, 472)
          assert.strictEqual(answer.usage.inputTokens.cacheRead, 100)
          assert.strictEqual(answer.usage.inputTokens.cacheWrite, 20)
          assert.strictEqual(answer.usage.outputTokens.total, 89)
        })
    )

    it.live("tool results go back as tool_result blocks in the user turn, before the user's next words", () =>
      Effect.gen(function* () {
        const server = yield* serve((_, i) => ({
          json: i === 0 ? message([toolUse], "tool_use") : message([{ type: "text", text: "15°C." }], "end_turn")
        }))
        const layer = Layer.merge(model(server.url), handlers)
        const first = yield* LanguageModel.generateText({ prompt: "Weather?", toolkit: Weather }).pipe(
          Effect.provide(layer)
        )
        const history = Prompt.concat(
          Prompt.concat(Prompt.make("Weather?"), Prompt.fromResponseParts(first.content)),
          Prompt.make("In Celsius please.")
        )
        yield* LanguageModel.generateText({ prompt: history, toolkit: Weather }).pipe(Effect.provide(layer))
        assert.deepStrictEqual(server.received[1]!.body.messages, [
          { role: "user", content: [{ type: "text", text: "Weather?" }] },
          {
            role: "assistant",
            content: [
              {
                type: "tool_use",
                id: "toolu_01A09q90qw90lq917835lq9",
                name: "get_weather",
                input: { location: "San Francisco, CA" }
              }
            ]
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_01A09q90qw90lq917835lq9", content: '{"temperature":15}' },
              { type: "text", text: "In Celsius please." }
            ]
          }
        ])
      })
    )

    it.live("maps each tool choice", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ json: message([{ type: "text", text: "ok" }], "end_turn") }))
        const layer = Layer.merge(model(server.url), handlers)
        for (const toolChoice of ["none", "required", { tool: "get_weather" }] as const) {
          yield* LanguageModel.generateText({ prompt: "x", toolkit: Weather, toolChoice }).pipe(Effect.provide(layer))
        }
        assert.deepStrictEqual(
          server.received.map((r) => r.body.tool_choice),
          [{ type: "none" }, { type: "any" }, { type: "tool", name: "get_weather" }]
        )
      })
    )

    it.live("a 529 (overloaded) is retried; a 401 says to set ANTHROPIC_API_KEY and never shows the key", () =>
      Effect.gen(function* () {
        const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }
        const server = yield* serve((_, i) =>
          i === 0 ? { status: 529, json: overloaded } : { json: message([{ type: "text", text: "ok" }], "end_turn") }
        )
        const answer = yield* LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        assert.strictEqual(answer.text, "ok")
        assert.strictEqual(server.received.length, 2)

        const denied = yield* serve(() => ({
          status: 401,
          json: {
            type: "error",
            error: { type: "authentication_error", message: `invalid x-api-key ${key}` },
            request_id: "req_1"
          }
        }))
        const error = yield* Effect.flip(
          LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(denied.url)))
        )
        assert.strictEqual(error.reason._tag, "AuthenticationError")
        assert.match(error.message, /answered 401 Unauthorized \(invalid x-api-key \[redacted\]\)/)
        assert.match(error.message, /set ANTHROPIC_API_KEY to a valid API key/)
        assert.notInclude(error.message, key)
      })
    )

    it.live("a 400 carries Anthropic's message", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          status: 400,
          json: {
            type: "error",
            error: { type: "invalid_request_error", message: "max_tokens: 100000 > 64000, which is the maximum" }
          }
        }))
        const error = yield* Effect.flip(
          LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "InvalidRequestError")
        assert.match(error.message, /max_tokens: 100000 > 64000/)
      })
    )
  })

  describe("generateObject", () => {
    it.live("asks for a JSON Schema output format and decodes the answer", () =>
      Effect.gen(function* () {
        const Report = Schema.Struct({ area: Schema.String, next: Schema.Array(Schema.String) })
        const server = yield* serve(() => ({
          json: message([{ type: "text", text: '{"area":"providers","next":["wire the agent"]}' }], "end_turn")
        }))
        const answer = yield* LanguageModel.generateObject({ prompt: "x", schema: Report }).pipe(
          Effect.provide(model(server.url))
        )
        assert.deepStrictEqual(answer.value, { area: "providers", next: ["wire the agent"] })
        const format = server.received[0]!.body.output_config.format
        assert.strictEqual(format.type, "json_schema")
        assert.strictEqual(format.schema.additionalProperties, false)
      })
    )
  })

  describe("streamText", () => {
    it.live("streams text and assembles a tool use from its input JSON deltas (pings ignored)", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          events: [
            messageStart,
            sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
            { event: "ping", data: { type: "ping" } },
            sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Okay," } }),
            sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " let me check." } }),
            sse({ type: "content_block_stop", index: 0 }),
            sse({
              type: "content_block_start",
              index: 1,
              content_block: { type: "tool_use", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", input: {} }
            }),
            sse({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } }),
            sse({
              type: "content_block_delta",
              index: 1,
              delta: { type: "input_json_delta", partial_json: '{"location":' }
            }),
            sse({
              type: "content_block_delta",
              index: 1,
              delta: { type: "input_json_delta", partial_json: ' "San Francisco, CA"' }
            }),
            sse({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "}" } }),
            sse({ type: "content_block_stop", index: 1 }),
            sse({
              type: "message_delta",
              delta: { stop_reason: "tool_use", stop_sequence: null },
              usage: { output_tokens: 89 }
            }),
            sse({ type: "message_stop" })
          ]
        }))
        const parts = yield* LanguageModel.streamText({ prompt: "x", toolkit: Weather }).pipe(
          Stream.runCollect,
          Effect.provide(Layer.merge(model(server.url), handlers))
        )
        assert.isTrue(server.received[0]!.body.stream)
        assert.deepStrictEqual(
          parts.filter((p): p is Response.TextDeltaPart => p.type === "text-delta").map((p) => p.delta),
          ["Okay,", " let me check."]
        )
        assert.deepStrictEqual(
          parts.filter((p) => p.type === "tool-params-delta").map((p) => (p as Response.ToolParamsDeltaPart).delta),
          ['{"location":', ' "San Francisco, CA"', "}"]
        )
        const call = parts.find((p) => p.type === "tool-call")!
        assert.deepStrictEqual(
          [call.id, call.name, call.params],
          ["toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", { location: "San Francisco, CA" }]
        )
        assert.deepStrictEqual(parts.find((p) => p.type === "tool-result")!.result, { temperature: 15 })
        const finish = parts.find((p): p is Response.FinishPart => p.type === "finish")!
        assert.strictEqual(finish.reason, "tool-calls")
        assert.strictEqual(finish.usage.inputTokens.total, 472)
        assert.strictEqual(finish.usage.outputTokens.total, 89)
      })
    )

    it.live("streamed thinking keeps its signature, and goes back as a thinking block in the next turn", () =>
      Effect.gen(function* () {
        const server = yield* serve((_, i) =>
          i === 0
            ? {
                events: [
                  messageStart,
                  sse({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }),
                  sse({
                    type: "content_block_delta",
                    index: 0,
                    delta: { type: "thinking_delta", thinking: "Let me think." }
                  }),
                  sse({
                    type: "content_block_delta",
                    index: 0,
                    delta: { type: "signature_delta", signature: "EqQBCgIYAhIM" }
                  }),
                  sse({ type: "content_block_stop", index: 0 }),
                  sse({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
                  sse({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "42" } }),
                  sse({ type: "content_block_stop", index: 1 }),
                  sse({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 10 } }),
                  sse({ type: "message_stop" })
                ]
              }
            : { json: message([{ type: "text", text: "ok" }], "end_turn") }
        )
        const layer = model(server.url, { thinkingBudget: 1024 })
        const parts = yield* LanguageModel.streamText({ prompt: "x" }).pipe(Stream.runCollect, Effect.provide(layer))
        assert.deepStrictEqual(server.received[0]!.body.thinking, { type: "enabled", budget_tokens: 1024 })
        const history = Prompt.concat(Prompt.make("x"), Prompt.fromResponseParts(parts))
        yield* LanguageModel.generateText({ prompt: history }).pipe(Effect.provide(layer))
        assert.deepStrictEqual(server.received[1]!.body.messages[1], {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Let me think.", signature: "EqQBCgIYAhIM" },
            { type: "text", text: "42" }
          ]
        })
      })
    )

    it.live("an error event (overloaded) fails the stream with its type", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          events: [messageStart, sse({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })]
        }))
        const error = yield* Effect.flip(
          LanguageModel.streamText({ prompt: "x" }).pipe(Stream.runDrain, Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "InternalProviderError")
        assert.match(error.message, /overloaded_error/)
      })
    )
  })
})
