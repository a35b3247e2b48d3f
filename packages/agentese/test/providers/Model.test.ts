import { assert, describe, it } from "@effect/vitest"
import { Model } from "@ugent/agentese/providers"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { LanguageModel, Model as AiModel } from "effect/ai"
import { FetchHttpClient } from "effect/http"
import { closedPort, serve } from "./fixture.ts"

const openAiKey = "sk-proj-model-test-0123456789"
const anthropicKey = "sk-ant-api03-model-test-0123456789"
const keys = { OPENAI_API_KEY: openAiKey, ANTHROPIC_API_KEY: anthropicKey }

const parse = (value: string, env: Model.Env = keys) => Effect.runSync(Model.parse(value, env))
const failure = (value: string, env: Model.Env = keys) => Effect.runSync(Effect.flip(Model.parse(value, env)))

const assertOneLineFix = (message: string) => {
  assert.notInclude(message, "\n")
  assert.match(message, /: (set|use|check|start|try) /)
  assert.notInclude(message, openAiKey)
  assert.notInclude(message, anthropicKey)
}

describe("Model", () => {
  describe("parse", () => {
    it("reads each provider, with the default base URLs and the keys of the providers' variables", () => {
      const openai = parse("openai:gpt-4.1-mini")
      assert.deepStrictEqual(
        [openai.provider, openai.model, openai.baseUrl, openai.keyVariable],
        ["openai", "gpt-4.1-mini", "https://api.openai.com/v1", "OPENAI_API_KEY"]
      )
      assert.strictEqual(Redacted.value(openai.apiKey!), openAiKey)
      assert.strictEqual(parse("openai-responses:o4-mini").provider, "openai-responses")
      const claude = parse("anthropic:claude-sonnet-4-5")
      assert.deepStrictEqual(
        [claude.provider, claude.model, claude.baseUrl, claude.keyVariable],
        ["anthropic", "claude-sonnet-4-5", "https://api.anthropic.com", "ANTHROPIC_API_KEY"]
      )
      assert.strictEqual(Redacted.value(claude.apiKey!), anthropicKey)
      const local = parse("openai-compatible:http://localhost:11434/v1/#llama3.2:8b", {})
      assert.deepStrictEqual(
        [local.provider, local.model, local.baseUrl, local.apiKey],
        ["openai-compatible", "llama3.2:8b", "http://localhost:11434/v1", undefined]
      )
    })

    it("OPENAI_BASE_URL and ANTHROPIC_BASE_URL move the official providers", () => {
      assert.strictEqual(
        parse("openai:gpt-4.1", { ...keys, OPENAI_BASE_URL: "https://proxy.example/v1" }).baseUrl,
        "https://proxy.example/v1"
      )
      assert.strictEqual(
        parse("anthropic:claude-haiku-4-5", { ...keys, ANTHROPIC_BASE_URL: "https://gw.example/" }).baseUrl,
        "https://gw.example"
      )
    })

    it("a misconfiguration is one line that says what to set, and never shows a key", () => {
      const cases: ReadonlyArray<readonly [string, Model.Env, RegExp]> = [
        ["gpt-4o", keys, /UGENT_MODEL=gpt-4o names no provider: set UGENT_MODEL=openai:gpt-4o/],
        [
          "gemini:pro",
          keys,
          /unknown provider "gemini": use openai:<model>, openai-responses:<model>, anthropic:<model>/
        ],
        ["openai:", keys, /UGENT_MODEL=openai: names no model: set UGENT_MODEL=openai:gpt-4.1-mini/],
        ["openai:gpt 4", keys, /model name with spaces/],
        ["openai:gpt-4.1", {}, /needs an API key: set OPENAI_API_KEY/],
        ["openai-responses:gpt-4.1", { OPENAI_API_KEY: "  " }, /needs an API key: set OPENAI_API_KEY/],
        ["anthropic:claude-sonnet-4-5", { OPENAI_API_KEY: openAiKey }, /needs an API key: set ANTHROPIC_API_KEY/],
        [
          "openai-compatible:http://localhost:11434/v1",
          keys,
          /names no model after the base URL: set UGENT_MODEL=openai-compatible:http:\/\/localhost:11434\/v1#<model>/
        ],
        [
          "openai-compatible:localhost:11434#llama3.2",
          keys,
          /not an http\(s\) URL: set UGENT_MODEL=openai-compatible:http:\/\/localhost:11434\/v1#llama3.2/
        ],
        ["openai-compatible:#llama3.2", keys, /names no base URL/],
        [
          "http://localhost:11434/v1#llama3.2",
          keys,
          /names no provider: set UGENT_MODEL=openai-compatible:<base-url>#<model>/
        ],
        [
          "openai:gpt-4.1",
          { ...keys, OPENAI_BASE_URL: "api.openai.com" },
          /OPENAI_BASE_URL has "api.openai.com", which is not an http\(s\) URL: set it/
        ],
        ["anthropic:claude", { ...keys, ANTHROPIC_BASE_URL: "ftp://x" }, /ANTHROPIC_BASE_URL has "ftp:\/\/x"/]
      ]
      for (const [value, env, expected] of cases) {
        const error = failure(value, env)
        assert.strictEqual(error._tag, "ModelConfigError")
        assert.match(error.message, expected, value)
        assertOneLineFix(error.message)
      }
    })

    it.prop(
      "any UGENT_MODEL value is a configuration or one line that says what to set",
      [Schema.String],
      ([value]) => {
        const exit = Effect.runSyncExit(Model.parse(value, keys))
        if (exit._tag === "Failure") {
          const error = Effect.runSync(Effect.flip(Model.parse(value, keys)))
          assertOneLineFix(error.message)
        }
      }
    )

    it("no UGENT_MODEL is no model; required says what to set", () => {
      assert.isTrue(Option.isNone(Effect.runSync(Model.configured({ UGENT_MODEL: "  " }))))
      assert.isTrue(Option.isSome(Effect.runSync(Model.configured({ ...keys, UGENT_MODEL: "openai:gpt-4.1" }))))
      const error = Effect.runSync(Effect.flip(Model.required({})))
      assert.strictEqual(
        error.message,
        "No model is configured: set UGENT_MODEL=openai:<model>, openai-responses:<model>, anthropic:<model> or openai-compatible:<base-url>#<model>"
      )
    })

    it("describe never shows the key", () => {
      const text = Model.describe(parse("anthropic:claude-sonnet-4-5"))
      assert.strictEqual(text, "anthropic:claude-sonnet-4-5 at https://api.anthropic.com")
      assert.notInclude(JSON.stringify(parse("openai:gpt-4.1")), openAiKey)
    })
  })

  describe("fromEnv", () => {
    const completion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: "ok", refusal: null }, finish_reason: "stop" }]
    }
    const response = {
      id: "resp_1",
      object: "response",
      created_at: 1,
      status: "completed",
      model: "m",
      output: [
        {
          type: "message",
          id: "msg_1",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "ok", annotations: [] }]
        }
      ],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 }
    }
    const message = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "m",
      content: [{ type: "text", text: "ok" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 1, output_tokens: 1 }
    }

    it.live("builds the provider UGENT_MODEL names, at the base URL and with the key of the environment", () =>
      Effect.gen(function* () {
        const server = yield* serve((r) => ({
          json: r.path.endsWith("/chat/completions") ? completion : r.path.endsWith("/responses") ? response : message
        }))
        const envs: ReadonlyArray<readonly [Model.Env, string, string | undefined]> = [
          [
            { ...keys, UGENT_MODEL: "openai:gpt-4.1", OPENAI_BASE_URL: `${server.url}/v1` },
            "/v1/chat/completions",
            `Bearer ${openAiKey}`
          ],
          [
            { ...keys, UGENT_MODEL: "openai-responses:gpt-4.1", OPENAI_BASE_URL: `${server.url}/v1` },
            "/v1/responses",
            `Bearer ${openAiKey}`
          ],
          [
            { ...keys, UGENT_MODEL: "anthropic:claude-sonnet-4-5", ANTHROPIC_BASE_URL: server.url },
            "/v1/messages",
            anthropicKey
          ],
          [{ UGENT_MODEL: `openai-compatible:${server.url}/v1#llama3.2` }, "/v1/chat/completions", undefined]
        ]
        for (const [env, path, credential] of envs) {
          const layer = Model.fromEnv({ env })
          const text = yield* LanguageModel.generateText({ prompt: "hi" }).pipe(
            Effect.map((r) => r.text),
            Effect.provide(layer)
          )
          assert.strictEqual(text, "ok")
          const sent = server.received[server.received.length - 1]!
          assert.strictEqual(sent.path, path)
          assert.strictEqual(sent.headers.authorization ?? sent.headers["x-api-key"], credential)
          const provider = yield* Effect.provide(
            Effect.gen(function* () {
              return yield* AiModel.ProviderName
            }),
            layer
          )
          assert.strictEqual(provider, env.UGENT_MODEL!.startsWith("anthropic") ? "anthropic" : "openai")
        }
      })
    )

    it.effect("a misconfiguration fails the layer before any call", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(
          Effect.scoped(Layer.build(Model.fromEnv({ env: { UGENT_MODEL: "openai:gpt-4.1" } })))
        )
        assert.strictEqual(error._tag, "ModelConfigError")
        assert.strictEqual(
          error.message,
          "UGENT_MODEL=openai:gpt-4.1 needs an API key: set OPENAI_API_KEY (for a server that needs no key, use UGENT_MODEL=openai-compatible:<base-url>#gpt-4.1)"
        )
      })
    )
  })

  describe("check", () => {
    const checkWith = (env: Model.Env) => Model.check.pipe(Effect.provide(Model.fromEnv({ env })))
    const unavailable = (env: Model.Env) =>
      Effect.map(Effect.flip(checkWith(env)), (error) => {
        if (error._tag !== "ModelUnavailable") return assert.fail(`expected ModelUnavailable, got ${error.message}`)
        assertOneLineFix(error.message)
        return error
      })

    it.live("asks the models endpoint for the model, with the key, and passes when it answers", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ json: { id: "gpt-4.1", object: "model" } }))
        yield* checkWith({ ...keys, UGENT_MODEL: "openai:gpt-4.1", OPENAI_BASE_URL: `${server.url}/v1` })
        yield* checkWith({ ...keys, UGENT_MODEL: "anthropic:claude-sonnet-4-5", ANTHROPIC_BASE_URL: server.url })
        yield* checkWith({ UGENT_MODEL: `openai-compatible:${server.url}/v1#llama3.2` })
        assert.deepStrictEqual(
          server.received.map((r) => [r.method, r.path]),
          [
            ["GET", "/v1/models/gpt-4.1"],
            ["GET", "/v1/models/claude-sonnet-4-5"],
            ["GET", "/v1/models"]
          ]
        )
        assert.strictEqual(server.received[0]!.headers.authorization, `Bearer ${openAiKey}`)
        assert.strictEqual(server.received[1]!.headers["x-api-key"], anthropicKey)
        assert.strictEqual(server.received[1]!.headers["anthropic-version"], "2023-06-01")
      })
    )

    it.live("a 401 is one line that says which variable to set", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          status: 401,
          json: {
            error: {
              message: `Incorrect API key provided: ${openAiKey}`,
              type: "invalid_request_error",
              code: "invalid_api_key"
            }
          }
        }))
        const error = yield* unavailable({
          ...keys,
          UGENT_MODEL: "openai:gpt-4.1",
          OPENAI_BASE_URL: `${server.url}/v1`
        })
        assert.strictEqual(error.reason, "unauthorized")
        assert.match(
          error.message,
          /answered 401 Unauthorized .*rejecting the API key: set OPENAI_API_KEY to a valid API key$/
        )
        assert.strictEqual(server.received.length, 1)
        const claude = yield* serve(() => ({
          status: 401,
          json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } }
        }))
        const denied = yield* unavailable({
          ...keys,
          UGENT_MODEL: "anthropic:claude-sonnet-4-5",
          ANTHROPIC_BASE_URL: claude.url
        })
        assert.match(denied.message, /set ANTHROPIC_API_KEY to a valid API key$/)
        const local = yield* serve(() => ({ status: 401, json: { error: "unauthorized" } }))
        const keyless = yield* unavailable({ UGENT_MODEL: `openai-compatible:${local.url}/v1#llama3.2` })
        assert.match(keyless.message, /needs an API key: it answered 401 Unauthorized: set OPENAI_API_KEY$/)
      })
    )

    it.live("an unknown model, and a wrong path on a local server, are told apart", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({
          status: 404,
          json: {
            error: {
              message: "The model `gpt-9` does not exist",
              type: "invalid_request_error",
              code: "model_not_found"
            }
          }
        }))
        const unknown = yield* unavailable({
          ...keys,
          UGENT_MODEL: "openai:gpt-9",
          OPENAI_BASE_URL: `${server.url}/v1`
        })
        assert.strictEqual(unknown.reason, "unknown-model")
        assert.match(
          unknown.message,
          /does not know the model "gpt-9" .*: check the model name in UGENT_MODEL, or the base URL in OPENAI_BASE_URL$/
        )
        const wrongPath = yield* unavailable({ UGENT_MODEL: `openai-compatible:${server.url}#llama3.2` })
        assert.match(
          wrongPath.message,
          /check the base URL in UGENT_MODEL \(OpenAI-compatible servers usually end in \/v1\)$/
        )
      })
    )

    it.live("an unreachable base URL is one line that names it and what to set", () =>
      Effect.gen(function* () {
        const port = yield* closedPort
        const local = yield* unavailable({ UGENT_MODEL: `openai-compatible:http://127.0.0.1:${port}/v1#llama3.2` })
        assert.strictEqual(local.reason, "unreachable")
        assert.strictEqual(
          local.message,
          `Cannot reach the model server at http://127.0.0.1:${port}/v1 (ECONNREFUSED): start the server, or set UGENT_MODEL=openai-compatible:<base-url>#llama3.2 to its URL`
        )
        const proxy = yield* unavailable({
          ...keys,
          UGENT_MODEL: "openai:gpt-4.1",
          OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`
        })
        assert.match(proxy.message, /\(ECONNREFUSED\): check the network, or set OPENAI_BASE_URL to the right URL$/)
      })
    )

    it.live("a server that does not answer fails within the timeout", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ silent: true }))
        const config = yield* Model.parse(`openai-compatible:${server.url}/v1#llama3.2`, {})
        const start = Date.now()
        const error = yield* Effect.flip(
          Model.checkConfig(config, { timeout: "300 millis" }).pipe(Effect.provide(FetchHttpClient.layer))
        )
        assert.strictEqual(error.reason, "unreachable")
        assert.match(error.message, /no answer within 300ms/)
        assert.isBelow(Date.now() - start, 3000)
      })
    )

    it.live("a rate-limited answer passes: the server is there and takes the key", () =>
      Effect.gen(function* () {
        const server = yield* serve(() => ({ status: 429, headers: { "retry-after": "20" }, json: {} }))
        yield* checkWith({ ...keys, UGENT_MODEL: "openai:gpt-4.1", OPENAI_BASE_URL: `${server.url}/v1` })
      })
    )
  })
})
