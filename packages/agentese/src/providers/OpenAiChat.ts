/**
 * A model behind the OpenAI Chat Completions API (`POST /chat/completions`),
 * as `effect/ai`'s `LanguageModel`: OpenAI itself, or any server that speaks
 * the same API by its base URL (Ollama, vLLM, LM Studio). Tools of an
 * `effect/ai` toolkit become function definitions, tool calls come back as
 * tool-call parts (streamed argument deltas assembled), tool results go back
 * in the next turn, `generateObject` asks for a JSON Schema response format,
 * and usage and finish reasons are reported. Written over Effect's
 * `HttpClient`: provide one (`FetchHttpClient.layer`).
 *
 * Failures are `AiError`s: a 401 or 403 says which environment variable to
 * set, a 400 carries the provider's message, 429 and 5xx answers are retried
 * with capped, jittered backoff that honours `Retry-After`, and no message
 * ever contains the API key.
 *
 * @since 0.2.0
 */
import { Effect, Layer, type Redacted, Stream } from "effect"
import { LanguageModel, Model as AiModel, Telemetry } from "effect/ai"
import { HttpClient } from "effect/http"
import * as Http from "./internal/http.ts"
import * as Chat from "./internal/openAiChat.ts"
import * as Tools from "./internal/tools.ts"

/**
 * How failed calls are retried: `times` retries (default 4) with jittered
 * exponential backoff from `base` (default 500 ms) capped at `cap` (default
 * 10 s), raised to the provider's `Retry-After`; a `Retry-After` longer than
 * `maxRetryAfter` (default 60 s) ends the retries.
 *
 * @category models
 * @since 0.2.0
 */
export type RetryOptions = Http.RetryOptions

/**
 * The options of a Chat Completions model.
 *
 * @category models
 * @since 0.2.0
 */
export interface Options {
  /** The model name the server knows: `gpt-4.1-mini`, `llama3.2`. */
  readonly model: string
  /** Sent as `Authorization: Bearer …`; none for a local server that needs no key. */
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  /** Default `https://api.openai.com/v1`; a local server's is like `http://localhost:11434/v1`. */
  readonly baseUrl?: string | undefined
  /** More headers for every request (an organization, a project). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The environment variable a failed authentication tells the user to set (default `OPENAI_API_KEY`). */
  readonly keyVariable?: string | undefined
  /** How messages name the server (default `OpenAI` for OpenAI's URL, `the model server at <url>` otherwise). */
  readonly providerName?: string | undefined
  /**
   * Offer tools in strict mode (`strict: true`, parameters in OpenAI's
   * strict subset) unless a tool's `Tool.Strict` annotation says otherwise;
   * default false. A tool given by a raw JSON Schema is always offered plain.
   */
  readonly strictTools?: boolean | undefined
  /** The most tokens an answer may have; sent as `max_completion_tokens` (or `max_tokens`, see `maxTokensField`). */
  readonly maxOutputTokens?: number | undefined
  /** Default `max_completion_tokens`; older OpenAI-compatible servers know only `max_tokens`. */
  readonly maxTokensField?: "max_completion_tokens" | "max_tokens" | undefined
  readonly temperature?: number | undefined
  /** Retries of 429 and 5xx answers and lost connections, or `false` for none. */
  readonly retry?: RetryOptions | false | undefined
}

/**
 * Builds the `LanguageModel` of a Chat Completions model over the
 * `HttpClient` in context.
 *
 * **Example** (A local server, no key)
 * ```ts
 * import { OpenAiChat } from "@ugent/agentese/providers"
 * import { Effect } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * const model = OpenAiChat.make({ model: "llama3.2", baseUrl: "http://localhost:11434/v1" })
 * const service = Effect.runSync(model.pipe(Effect.provide(FetchHttpClient.layer)))
 * console.log(typeof service.generateText, typeof service.streamText)
 * // => function function
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (options: Options): Effect.Effect<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const conn = Http.openAiConnection("OpenAiChat", options)
    const settings: Chat.Settings = {
      model: options.model,
      strictTools: options.strictTools ?? false,
      maxOutputTokens: options.maxOutputTokens,
      maxTokensField: options.maxTokensField ?? "max_completion_tokens",
      temperature: options.temperature
    }
    const annotate = (providerOptions: LanguageModel.ProviderOptions) =>
      Telemetry.addGenAIAnnotations(providerOptions.span, {
        provider: { name: "openai" },
        operation: { name: "chat" },
        request: {
          model: options.model,
          temperature: options.temperature ?? null,
          maxTokens: options.maxOutputTokens ?? null
        }
      })
    return yield* LanguageModel.make({
      codecTransformer: Tools.codecTransformer("openai"),
      supportsSystemMessagesInHistory: Effect.succeed(true),
      generateText: (providerOptions) =>
        Effect.gen(function* () {
          annotate(providerOptions)
          const { body, tools } = yield* Chat.request(conn, "generateText", providerOptions, settings)
          const response = yield* Http.send(
            client,
            conn,
            "generateText",
            Http.request(conn, "POST", "chat/completions", body)
          )
          const completion = yield* Http.decodeJson(conn, "generateText", response, Chat.Completion)
          return Chat.parts(completion, tools)
        }),
      streamText: (providerOptions) =>
        Stream.unwrap(
          Effect.gen(function* () {
            annotate(providerOptions)
            const { body, tools } = yield* Chat.request(conn, "streamText", providerOptions, settings)
            const streamed: Chat.Request = { ...body, stream: true, stream_options: { include_usage: true } }
            const response = yield* Http.send(
              client,
              conn,
              "streamText",
              Http.request(conn, "POST", "chat/completions", streamed)
            )
            return Chat.streamParts(conn, "streamText", Http.sse(conn, "streamText", response), tools)
          })
        )
    })
  })

/**
 * The layer of a Chat Completions model, needing an `HttpClient`.
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))

/**
 * The model as an `effect/ai` `Model`: the layer, plus the provider and model
 * names (`Model.ProviderName`, `Model.ModelName`), for `ExecutionPlan`s.
 *
 * @category layers
 * @since 0.2.0
 */
export const model = (options: Options): AiModel.Model<"openai", LanguageModel.LanguageModel, HttpClient.HttpClient> =>
  AiModel.make("openai", options.model, layer(options))
