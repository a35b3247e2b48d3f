import { assert, describe, it } from "@effect/vitest"
import { OpenAiResponses } from "@ugent/agentese/providers"
import { Effect, Layer, Schema, Stream } from "effect"
import { AiError, LanguageModel, Prompt, type Response, Tool, Toolkit } from "effect/ai"
import { type Event, fastRetry, serve, withFetch } from "./fixture.ts"

const key = "sk-proj-responses-0123456789"

const GetWeather = Tool.make("get_weather", {
  description: "The current weather in a city.",
  parameters: Schema.Struct({ location: Schema.String }),
  success: Schema.Struct({ temperature: Schema.Number }),
  failureMode: "return"
})
const Weather = Toolkit.make(GetWeather)
const handlers = Weather.toLayer({ get_weather: () => Effect.succeed({ temperature: 14 }) })

// The answers below are the documented shapes of POST /responses.
const response = (output: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => ({
  id: "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
  object: "response",
  created_at: 1741476542,
  status: "completed",
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  model: "gpt-4.1-2025-04-14",
  output,
  parallel_tool_calls: true,
  store: false,
  tool_choice: "auto",
  tools: [],
  usage: {
    input_tokens: 36,
    input_tokens_details: { cached_tokens: 4 },
    output_tokens: 87,
    output_tokens_details: { reasoning_tokens: 7 },
    total_tokens: 123
  },
  ...extra
})

const message = (text: string) => ({
  type: "message",
  id: "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
  status: "completed",
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [] }]
})

const functionCall = {
  type: "function_call",
  id: "fc_12345xyz",
  call_id: "call_12345xyz",
  name: "get_weather",
  arguments: '{"location":"Paris, France"}',
  status: "completed"
}

const event = (type: string, data: Record<string, unknown>, n: number): Event => ({
  event: type,
  data: { type, sequence_number: n, ...data }
})

const model = (url: string, options: Partial<OpenAiResponses.Options> = {}) =>
  withFetch(
    OpenAiResponses.layer({ model: "gpt-4.1", apiKey: key, baseUrl: `${url}/v1`, retry: fastRetry, ...options })
  )

describe("OpenAiResponses", () => {
  describe("generateText", () => {
    it.live("sends input items and flat function tools, and maps text, finish reason and usage", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ json: response([message("Hello.")]) }))
        const answer = yield* LanguageModel.generateText({
          prompt: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Hi" }
          ],
          toolkit: Weather
        }).pipe(Effect.provide(Layer.merge(model(server.url), handlers)))
        const sent = server.received[0]!
        assert.strictEqual(sent.path, "/v1/responses")
        assert.strictEqual(sent.headers.authorization, `Bearer ${key}`)
        assert.deepStrictEqual(sent.body.input, [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hi" }
        ])
        assert.isFalse(sent.body.store)
        assert.deepStrictEqual(sent.body.tools, [
          {
            type: "function",
            name: "get_weather",
            description: "The current weather in a city.",
            parameters: Tool.getJsonSchema(GetWeather),
            strict: false
          }
        ])
        assert.strictEqual(sent.body.tool_choice, "auto")
        assert.strictEqual(answer.text, "Hello.")
        assert.strictEqual(answer.finishReason, "stop")
        assert.strictEqual(answer.usage.inputTokens.total, 36)
        assert.strictEqual(answer.usage.inputTokens.cacheRead, 4)
        assert.strictEqual(answer.usage.outputTokens.reasoning, 7)
      })
    )

    it.live("a function call runs the tool; the call and its output go back as items in the next turn", () =>
      Effect.gen(function* () {
        const server = yield* serve((_, i) => ({
          json: i === 0 ? response([functionCall]) : response([message("14°C.")])
        }))
        const layer = Layer.merge(model(server.url), handlers)
        const first = yield* LanguageModel.generateText({ prompt: "Weather in Paris?", toolkit: Weather }).pipe(
          Effect.provide(layer)
        )
        assert.strictEqual(first.finishReason, "tool-calls")
        assert.deepStrictEqual(
          first.toolCalls.map((c) => [c.id, c.name, c.params]),
          [["call_12345xyz", "get_weather", { location: "Paris, France" }]]
        )
        assert.deepStrictEqual(first.toolResults[0]!.result, { temperature: 14 })
        const history = Prompt.concat(Prompt.make("Weather in Paris?"), Prompt.fromResponseParts(first.content))
        yield* LanguageModel.generateText({ prompt: history, toolkit: Weather }).pipe(Effect.provide(layer))
        assert.deepStrictEqual(server.received[1]!.body.input, [
          { role: "user", content: "Weather in Paris?" },
          {
            type: "function_call",
            call_id: "call_12345xyz",
            name: "get_weather",
            arguments: '{"location":"Paris, France"}'
          },
          { type: "function_call_output", call_id: "call_12345xyz", output: '{"temperature":14}' }
        ])
      })
    )

    it.live("a reasoning summary is a reasoning part; an incomplete answer out of tokens finishes with length", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          json: response(
            [
              { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Thinking about it." }] },
              message("Partial")
            ],
            { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }
          )
        }))
        const answer = yield* LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        assert.strictEqual(answer.reasoningText, "Thinking about it.")
        assert.strictEqual(answer.finishReason, "length")
      })
    )

    it.live("output items of kinds this provider does not use are skipped, whatever their shape", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          json: response([
            { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "q" } },
            { type: "tool_search_call", id: "ts_1", arguments: { query: "q" }, status: "completed" },
            message("Found it.")
          ])
        }))
        const answer = yield* LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        assert.strictEqual(answer.text, "Found it.")
      })
    )

    it.live("a failed response is an error with the provider's message", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          json: response([], { status: "failed", error: { code: "server_error", message: "Something went wrong" } })
        }))
        const error = yield* Effect.flip(
          LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "InternalProviderError")
        assert.match(error.message, /Something went wrong/)
      })
    )

    it.live("a 401 says to set OPENAI_API_KEY and never shows the key", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          status: 401,
          json: {
            error: {
              message: `Incorrect API key provided: ${key}.`,
              type: "invalid_request_error",
              code: "invalid_api_key"
            }
          }
        }))
        const error = yield* Effect.flip(
          LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        )
        assert.isTrue(AiError.isAiError(error))
        assert.strictEqual(error.reason._tag, "AuthenticationError")
        assert.match(error.message, /set OPENAI_API_KEY to a valid API key/)
        assert.notInclude(error.message, key)
      })
    )
  })

  describe("generateObject", () => {
    it.live("asks for a strict JSON Schema text format and decodes the answer", () =>
      Effect.gen(function* () {
        const Summary = Schema.Struct({ title: Schema.String, points: Schema.Array(Schema.String) })
        const server = yield* serve(() => ({ json: response([message('{"title":"T","points":["a"]}')]) }))
        const answer = yield* LanguageModel.generateObject({
          prompt: "x",
          schema: Summary,
          objectName: "summary"
        }).pipe(Effect.provide(model(server.url)))
        assert.deepStrictEqual(answer.value, { title: "T", points: ["a"] })
        const format = server.received[0]!.body.text.format
        assert.deepStrictEqual([format.type, format.name, format.strict], ["json_schema", "summary", true])
      })
    )
  })

  describe("streamText", () => {
    it.live("streams text deltas and assembles a function call from its argument deltas", () =>
      Effect.gen(function* () {
        const created = response([], { status: "in_progress", usage: null })
        const completed = response([message("Checking."), { ...functionCall, arguments: '{"location":"Paris"}' }])
        const server = yield* serve(() => ({
          events: [
            event("response.created", { response: created }, 0),
            event("response.in_progress", { response: created }, 1),
            event(
              "response.output_item.added",
              {
                output_index: 0,
                item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] }
              },
              2
            ),
            event(
              "response.content_part.added",
              {
                item_id: "msg_1",
                output_index: 0,
                content_index: 0,
                part: { type: "output_text", text: "", annotations: [] }
              },
              3
            ),
            event(
              "response.output_text.delta",
              { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Check", logprobs: [] },
              4
            ),
            event(
              "response.output_text.delta",
              { item_id: "msg_1", output_index: 0, content_index: 0, delta: "ing.", logprobs: [] },
              5
            ),
            event(
              "response.output_text.done",
              { item_id: "msg_1", output_index: 0, content_index: 0, text: "Checking.", logprobs: [] },
              6
            ),
            event("response.output_item.done", { output_index: 0, item: message("Checking.") }, 7),
            event(
              "response.output_item.added",
              {
                output_index: 1,
                item: {
                  type: "function_call",
                  id: "fc_12345xyz",
                  call_id: "call_12345xyz",
                  name: "get_weather",
                  arguments: "",
                  status: "in_progress"
                }
              },
              8
            ),
            event(
              "response.function_call_arguments.delta",
              { item_id: "fc_12345xyz", output_index: 1, delta: '{"loc' },
              9
            ),
            event(
              "response.function_call_arguments.delta",
              { item_id: "fc_12345xyz", output_index: 1, delta: 'ation":"Paris"}' },
              10
            ),
            event(
              "response.function_call_arguments.done",
              { item_id: "fc_12345xyz", output_index: 1, arguments: '{"location":"Paris"}' },
              11
            ),
            event(
              "response.output_item.done",
              { output_index: 1, item: { ...functionCall, arguments: '{"location":"Paris"}' } },
              12
            ),
            event("response.completed", { response: completed }, 13)
          ]
        }))
        const parts = yield* LanguageModel.streamText({ prompt: "x", toolkit: Weather }).pipe(
          Stream.runCollect,
          Effect.provide(Layer.merge(model(server.url), handlers))
        )
        assert.isTrue(server.received[0]!.body.stream)
        assert.deepStrictEqual(
          parts.filter((p): p is Response.TextDeltaPart => p.type === "text-delta").map((p) => p.delta),
          ["Check", "ing."]
        )
        assert.deepStrictEqual(
          parts.filter((p) => p.type === "tool-params-delta").map((p) => (p as Response.ToolParamsDeltaPart).delta),
          ['{"loc', 'ation":"Paris"}']
        )
        const call = parts.find((p) => p.type === "tool-call")!
        assert.deepStrictEqual(
          [call.id, call.name, call.params],
          ["call_12345xyz", "get_weather", { location: "Paris" }]
        )
        assert.deepStrictEqual(parts.find((p) => p.type === "tool-result")!.result, { temperature: 14 })
        const finish = parts.find((p): p is Response.FinishPart => p.type === "finish")!
        assert.strictEqual(finish.reason, "tool-calls")
        assert.strictEqual(finish.usage.outputTokens.total, 87)
        assert.strictEqual(parts[0]!.type, "response-metadata")
      })
    )

    it.live("an error event fails the stream with the provider's message", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          events: [
            event("response.created", { response: response([], { status: "in_progress" }) }, 0),
            event("error", { code: "rate_limit_exceeded", message: "Rate limit reached for requests", param: null }, 1)
          ]
        }))
        const error = yield* Effect.flip(
          LanguageModel.streamText({ prompt: "x" }).pipe(Stream.runDrain, Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "RateLimitError")
      })
    )

    it.live("a stream that ends without response.completed fails", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          events: [event("response.created", { response: response([], { status: "in_progress" }) }, 0)]
        }))
        const error = yield* Effect.flip(
          LanguageModel.streamText({ prompt: "x" }).pipe(Stream.runDrain, Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "InvalidResponseError")
      })
    )
  })
})
