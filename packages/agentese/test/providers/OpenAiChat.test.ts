import { assert, describe, it } from "@effect/vitest"
import { OpenAiChat } from "@ugent/agentese/providers"
import { Effect, Layer, Schema, Stream } from "effect"
import { AiError, LanguageModel, Prompt, type Response, Tool, Toolkit } from "effect/ai"
import { type Answer, closedPort, fastRetry, type Received, serve, withFetch } from "./fixture.ts"

const key = "sk-test-0123456789abcdef"

const GetWeather = Tool.make("get_weather", {
  description: "The current weather in a city.",
  parameters: Schema.Struct({ city: Schema.String, unit: Schema.optionalKey(Schema.Literals(["c", "f"])) }),
  success: Schema.Struct({ temperature: Schema.Number }),
  failureMode: "return"
})
const Weather = Toolkit.make(GetWeather)
const seen: Array<unknown> = []
const handlers = Weather.toLayer({
  get_weather: (params) => Effect.sync(() => (seen.push(params), { temperature: 21 }))
})

// The answers below are the documented shapes of POST /chat/completions.
const completion = (message: Record<string, unknown>, finish: string) => ({
  id: "chatcmpl-abc123",
  object: "chat.completion",
  created: 1699896916,
  model: "gpt-4o-mini-2024-07-18",
  choices: [
    { index: 0, message: { role: "assistant", refusal: null, ...message }, logprobs: null, finish_reason: finish }
  ],
  usage: {
    prompt_tokens: 82,
    completion_tokens: 17,
    total_tokens: 99,
    prompt_tokens_details: { cached_tokens: 10, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 5, audio_tokens: 0 }
  },
  system_fingerprint: "fp_44709d6fcb"
})

const toolCallAnswer = (args: string): Answer => ({
  json: completion(
    {
      content: null,
      tool_calls: [{ id: "call_abc123", type: "function", function: { name: "get_weather", arguments: args } }]
    },
    "tool_calls"
  )
})

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  data: {
    id: "chatcmpl-123",
    object: "chat.completion.chunk",
    created: 1694268190,
    model: "gpt-4o-mini",
    system_fingerprint: "fp_44709d6fcb",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null
  }
})

const usageChunk = {
  data: {
    id: "chatcmpl-123",
    object: "chat.completion.chunk",
    created: 1694268190,
    model: "gpt-4o-mini",
    choices: [],
    usage: { prompt_tokens: 20, completion_tokens: 12, total_tokens: 32 }
  }
}

const model = (url: string, options: Partial<OpenAiChat.Options> = {}) =>
  withFetch(OpenAiChat.layer({ model: "gpt-4o-mini", apiKey: key, baseUrl: `${url}/v1`, retry: fastRetry, ...options }))

const errorOf = <A, R>(effect: Effect.Effect<A, AiError.AiError, R>) =>
  Effect.map(Effect.flip(effect), (e) => {
    assert.isTrue(AiError.isAiError(e))
    return e
  })

describe("OpenAiChat", () => {
  describe("generateText", () => {
    it.live("sends the prompt with the key as a bearer token, and maps text, finish reason and usage", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ json: completion({ content: "Hello there." }, "stop") }))
        const response = yield* LanguageModel.generateText({
          prompt: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Hi" }
          ]
        }).pipe(Effect.provide(model(server.url)))
        const sent = server.received[0]!
        assert.strictEqual(sent.method, "POST")
        assert.strictEqual(sent.path, "/v1/chat/completions")
        assert.strictEqual(sent.headers.authorization, `Bearer ${key}`)
        assert.match(String(sent.headers["content-type"]), /application\/json/)
        assert.deepStrictEqual(sent.body, {
          model: "gpt-4o-mini",
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Hi" }
          ]
        })
        assert.strictEqual(response.text, "Hello there.")
        assert.strictEqual(response.finishReason, "stop")
        assert.strictEqual(response.usage.inputTokens.total, 82)
        assert.strictEqual(response.usage.inputTokens.cacheRead, 10)
        assert.strictEqual(response.usage.inputTokens.uncached, 72)
        assert.strictEqual(response.usage.outputTokens.total, 17)
        assert.strictEqual(response.usage.outputTokens.reasoning, 5)
      })
    )

    it.live("offers the toolkit's tools, runs the call the model makes, and sends the result in the next turn", () =>
      Effect.gen(function* () {
        const server = yield* serve((_, i) =>
          i === 0
            ? toolCallAnswer('{\n"city": "Boston"\n}')
            : { json: completion({ content: "It is 21 degrees in Boston." }, "stop") }
        )
        const layer = Layer.merge(model(server.url), handlers)
        const first = yield* LanguageModel.generateText({ prompt: "Weather in Boston?", toolkit: Weather }).pipe(
          Effect.provide(layer)
        )
        assert.deepStrictEqual(server.received[0]!.body.tools, [
          {
            type: "function",
            function: {
              name: "get_weather",
              description: "The current weather in a city.",
              parameters: Tool.getJsonSchema(GetWeather)
            }
          }
        ])
        assert.strictEqual(server.received[0]!.body.tool_choice, "auto")
        assert.strictEqual(first.finishReason, "tool-calls")
        assert.deepStrictEqual(
          first.toolCalls.map((c) => [c.id, c.name, c.params]),
          [["call_abc123", "get_weather", { city: "Boston" }]]
        )
        assert.deepStrictEqual(first.toolResults[0]!.result, { temperature: 21 })

        const history = Prompt.concat(Prompt.make("Weather in Boston?"), Prompt.fromResponseParts(first.content))
        const second = yield* LanguageModel.generateText({ prompt: history, toolkit: Weather }).pipe(
          Effect.provide(layer)
        )
        assert.strictEqual(second.text, "It is 21 degrees in Boston.")
        assert.deepStrictEqual(server.received[1]!.body.messages, [
          { role: "user", content: "Weather in Boston?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_abc123", type: "function", function: { name: "get_weather", arguments: '{"city":"Boston"}' } }
            ]
          },
          { role: "tool", tool_call_id: "call_abc123", content: '{"temperature":21}' }
        ])
      })
    )

    it.live("maps each tool choice", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ json: completion({ content: "ok" }, "stop") }))
        const layer = Layer.merge(model(server.url), handlers)
        const choices = [
          "none",
          "required",
          { tool: "get_weather" },
          { oneOf: ["get_weather"], mode: "required" }
        ] as const
        for (const toolChoice of choices) {
          yield* LanguageModel.generateText({ prompt: "x", toolkit: Weather, toolChoice }).pipe(Effect.provide(layer))
        }
        assert.deepStrictEqual(
          server.received.map((r) => r.body.tool_choice),
          ["none", "required", { type: "function", function: { name: "get_weather" } }, "required"]
        )
      })
    )

    it.live("arguments that are not JSON become a failed call the model can read, not a failed answer", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => toolCallAnswer('{"city": "Bos'))
        const response = yield* LanguageModel.generateText({ prompt: "x", toolkit: Weather }).pipe(
          Effect.provide(Layer.merge(model(server.url), handlers))
        )
        const result = response.toolResults[0]!
        assert.isTrue(result.isFailure)
        assert.match(String((result.result as AiError.AiError).message), /get_weather/)
      })
    )

    it.live("in strict mode the parameters are OpenAI's strict subset, and a null optional argument is dropped", () =>
      Effect.gen(function* () {
        seen.length = 0
        const server = yield* serve(() => toolCallAnswer('{"city": "Oslo", "unit": null}'))
        yield* LanguageModel.generateText({ prompt: "x", toolkit: Weather }).pipe(
          Effect.provide(Layer.merge(model(server.url, { strictTools: true }), handlers))
        )
        const fn = server.received[0]!.body.tools[0].function
        assert.isTrue(fn.strict)
        assert.strictEqual(fn.parameters.additionalProperties, false)
        assert.deepStrictEqual(fn.parameters.required, ["city", "unit"])
        assert.deepStrictEqual(seen, [{ city: "Oslo" }])
      })
    )

    it.live("a refusal is text with the content-filter finish reason", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          json: completion({ content: null, refusal: "I can't help with that." }, "stop")
        }))
        const response = yield* LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        assert.strictEqual(response.text, "I can't help with that.")
        assert.strictEqual(response.finishReason, "content-filter")
      })
    )
  })

  describe("generateObject", () => {
    it.live("asks for a strict JSON Schema response format and decodes the answer", () =>
      Effect.gen(function* () {
        const Plan = Schema.Struct({ steps: Schema.Array(Schema.String), done: Schema.Boolean })
        const server = yield* serve(() => ({
          json: completion({ content: '{"steps":["read","write"],"done":false}' }, "stop")
        }))
        const response = yield* LanguageModel.generateObject({
          prompt: "Plan it",
          schema: Plan,
          objectName: "plan"
        }).pipe(Effect.provide(model(server.url)))
        assert.deepStrictEqual(response.value, { steps: ["read", "write"], done: false })
        const format = server.received[0]!.body.response_format
        assert.strictEqual(format.type, "json_schema")
        assert.strictEqual(format.json_schema.name, "plan")
        assert.isTrue(format.json_schema.strict)
        assert.strictEqual(format.json_schema.schema.additionalProperties, false)
      })
    )
  })

  describe("streamText", () => {
    it.live("streams text deltas and assembles a tool call from its streamed argument deltas", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          events: [
            chunk({ role: "assistant", content: "", refusal: null }),
            chunk({ content: "Let me " }),
            chunk({ content: "check." }),
            chunk({
              tool_calls: [
                { index: 0, id: "call_abc", type: "function", function: { name: "get_weather", arguments: "" } }
              ]
            }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty": "Bos' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: 'ton"}' } }] }),
            chunk({}, "tool_calls"),
            usageChunk,
            { data: "[DONE]" }
          ]
        }))
        const parts = yield* LanguageModel.streamText({ prompt: "Weather?", toolkit: Weather }).pipe(
          Stream.runCollect,
          Effect.provide(Layer.merge(model(server.url), handlers))
        )
        const sent = server.received[0]!.body
        assert.isTrue(sent.stream)
        assert.deepStrictEqual(sent.stream_options, { include_usage: true })
        const types = parts.map((p) => p.type)
        assert.deepStrictEqual(
          parts.filter((p): p is Response.TextDeltaPart => p.type === "text-delta").map((p) => p.delta),
          ["Let me ", "check."]
        )
        assert.deepStrictEqual(
          parts.filter((p) => p.type === "tool-params-delta").map((p) => (p as Response.ToolParamsDeltaPart).delta),
          ['{"ci', 'ty": "Bos', 'ton"}']
        )
        const call = parts.find((p) => p.type === "tool-call")!
        assert.deepStrictEqual([call.id, call.name, call.params], ["call_abc", "get_weather", { city: "Boston" }])
        const result = parts.find((p) => p.type === "tool-result")!
        assert.deepStrictEqual(result.result, { temperature: 21 })
        const finish = parts.find((p): p is Response.FinishPart => p.type === "finish")!
        assert.strictEqual(finish.reason, "tool-calls")
        assert.strictEqual(finish.usage.inputTokens.total, 20)
        assert.strictEqual(finish.usage.outputTokens.total, 12)
        assert.isBelow(types.indexOf("text-start"), types.indexOf("text-delta"))
        assert.isBelow(types.indexOf("tool-params-start"), types.indexOf("tool-params-end"))
        assert.isBelow(types.indexOf("tool-params-end"), types.indexOf("tool-call"))
      })
    )

    it.live("a stream cut before the answer finished fails, it does not end quietly", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ events: [chunk({ content: "Half" })] }))
        const error = yield* errorOf(
          LanguageModel.streamText({ prompt: "x" }).pipe(Stream.runDrain, Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "InvalidResponseError")
        assert.match(error.message, /closed the stream/)
      })
    )

    it.live("an error event inside the stream fails it with the provider's message", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          events: [
            chunk({ content: "Hi" }),
            { data: { error: { message: "The server had an error", type: "server_error" } } }
          ]
        }))
        const error = yield* errorOf(
          LanguageModel.streamText({ prompt: "x" }).pipe(Stream.runDrain, Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "InternalProviderError")
        assert.match(error.message, /The server had an error/)
      })
    )
  })

  describe("failures", () => {
    it.live("a 429 with Retry-After in seconds is retried after that delay", () =>
      Effect.gen(function* () {
        const server = yield* serve((_, i) =>
          i === 0
            ? {
                status: 429,
                headers: { "retry-after": "1" },
                json: { error: { message: "Rate limit reached", type: "requests" } }
              }
            : { json: completion({ content: "ok" }, "stop") }
        )
        const start = Date.now()
        const response = yield* LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        assert.strictEqual(response.text, "ok")
        assert.strictEqual(server.received.length, 2)
        assert.isAtLeast(Date.now() - start, 950)
      })
    )

    it.live("a 429 with Retry-After as an HTTP date is retried after that date", () =>
      Effect.gen(function* () {
        const server = yield* serve((_, i) =>
          i === 0
            ? { status: 429, headers: { "retry-after": new Date(Date.now() + 2000).toUTCString() }, json: {} }
            : { json: completion({ content: "ok" }, "stop") }
        )
        const start = Date.now()
        yield* LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        assert.strictEqual(server.received.length, 2)
        // An HTTP date has whole seconds: the wait is between 1 and 2 seconds.
        assert.isAtLeast(Date.now() - start, 950)
      })
    )

    it.live("a Retry-After longer than the longest wait ends the retries with the rate limit error", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ status: 429, headers: { "retry-after": "3600" }, json: {} }))
        const error = yield* errorOf(
          LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "RateLimitError")
        assert.match(error.message, /Retry after 1h/)
        assert.strictEqual(server.received.length, 1)
      })
    )

    it.live("5xx answers are retried until one succeeds", () =>
      Effect.gen(function* () {
        const server = yield* serve((_, i) =>
          i < 2
            ? { status: i === 0 ? 500 : 503, json: { error: { message: "oops" } } }
            : { json: completion({ content: "ok" }, "stop") }
        )
        const response = yield* LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        assert.strictEqual(response.text, "ok")
        assert.strictEqual(server.received.length, 3)
      })
    )

    it.live("5xx answers past the retries fail with the provider's status", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ status: 502, text: "bad gateway" }))
        const error = yield* errorOf(
          LanguageModel.generateText({ prompt: "x" }).pipe(
            Effect.provide(model(server.url, { retry: { ...fastRetry, times: 2 } }))
          )
        )
        assert.strictEqual(error.reason._tag, "InternalProviderError")
        assert.match(error.message, /502 Bad Gateway/)
        assert.strictEqual(server.received.length, 3)
      })
    )

    it.live("a 401 is one line that says which variable to set, and never shows the key", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          status: 401,
          json: {
            error: {
              message: `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`,
              type: "invalid_request_error",
              param: null,
              code: "invalid_api_key"
            }
          }
        }))
        const error = yield* errorOf(
          LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "AuthenticationError")
        assert.notInclude(error.message, "\n")
        assert.match(error.message, /401 Unauthorized/)
        assert.match(error.message, /set OPENAI_API_KEY to a valid API key/)
        assert.notInclude(error.message, key)
        assert.notInclude(JSON.stringify(error), key)
        assert.strictEqual(server.received.length, 1)
      })
    )

    it.live("a 400 carries the provider's message and is not retried", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          status: 400,
          json: {
            error: {
              message:
                "Invalid schema for function 'get_weather': 'additionalProperties' is required to be supplied and to be false.",
              type: "invalid_request_error",
              param: "tools[0].function.parameters",
              code: "invalid_function_parameters"
            }
          }
        }))
        const error = yield* errorOf(
          LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "InvalidRequestError")
        assert.match(error.message, /Invalid schema for function 'get_weather'/)
        assert.strictEqual(server.received.length, 1)
      })
    )

    it.live("an unreachable base URL is a network error that names it", () =>
      Effect.gen(function* () {
        const port = yield* closedPort
        const error = yield* errorOf(
          LanguageModel.generateText({ prompt: "x" }).pipe(
            Effect.provide(model(`http://127.0.0.1:${port}`, { retry: false }))
          )
        )
        assert.strictEqual(error.reason._tag, "NetworkError")
        assert.match(
          error.message,
          new RegExp(`Cannot reach the model server at http://127.0.0.1:${port}/v1 \\(ECONNREFUSED\\)`)
        )
      })
    )

    it.live("a body that is not a completion is an invalid response", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ json: { choices: "no" } }))
        const error = yield* errorOf(
          LanguageModel.generateText({ prompt: "x" }).pipe(Effect.provide(model(server.url)))
        )
        assert.strictEqual(error.reason._tag, "InvalidResponseError")
      })
    )
  })

  it.live("a local server without a key gets no authorization header", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => ({ json: completion({ content: "ok" }, "stop") }))
      yield* LanguageModel.generateText({ prompt: "x" }).pipe(
        Effect.provide(withFetch(OpenAiChat.layer({ model: "llama3.2", baseUrl: `${server.url}/v1` })))
      )
      const sent: Received = server.received[0]!
      assert.isUndefined(sent.headers.authorization)
      assert.strictEqual(sent.body.model, "llama3.2")
    })
  )
})
