/**
 * A Claude model behind the Anthropic Messages API (`POST /v1/messages`,
 * `anthropic-version: 2023-06-01`), as `effect/ai`'s `LanguageModel`: system
 * messages become the top-level system prompt, the toolkit's tools become
 * tool definitions, tool uses come back as tool-call parts (streamed input
 * JSON assembled), tool results go back as `tool_result` blocks in the next
 * user turn, `generateObject` asks for a JSON Schema output format, thinking
 * is reported as reasoning (with its signature kept for the next turn), and
 * usage (cache reads and writes included) and stop reasons are mapped.
 * Written over Effect's `HttpClient`: provide one (`FetchHttpClient.layer`).
 *
 * Failures are `AiError`s: a 401 or 403 says to set `ANTHROPIC_API_KEY`,
 * a 400 carries Anthropic's message, 429, 5xx and 529 (overloaded) answers
 * are retried with capped, jittered backoff that honours `Retry-After`, an
 * `error` event inside a stream fails it with its type, and no message ever
 * contains the API key.
 *
 * @since 0.2.0
 */
import { Effect, Layer, type Redacted, Stream } from "effect"
import { Model as AiModel, LanguageModel, Telemetry } from "effect/ai"
import { HttpClient } from "effect/http"
import * as Api from "./internal/anthropic.ts"
import * as Http from "./internal/http.ts"
import * as Tools from "./internal/tools.ts"

/**
 * How failed calls are retried (see `OpenAiChat.RetryOptions`).
 *
 * @category models
 * @since 0.2.0
 */
export type RetryOptions = Http.RetryOptions

/**
 * The options of a Messages API model.
 *
 * @category models
 * @since 0.2.0
 */
export interface Options {
  /** The model name: `claude-sonnet-4-5`, `claude-haiku-4-5`. */
  readonly model: string
  /** Sent as `x-api-key`. */
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  /** Default `https://api.anthropic.com` (requests go to `<baseUrl>/v1/messages`). */
  readonly baseUrl?: string | undefined
  /** More headers for every request (an `anthropic-beta` list). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The environment variable a failed authentication tells the user to set (default `ANTHROPIC_API_KEY`). */
  readonly keyVariable?: string | undefined
  /** How messages name the server (default `Anthropic`). */
  readonly providerName?: string | undefined
  /** Offer tools with strict tool use unless a tool's `Tool.Strict` annotation says otherwise; default false. */
  readonly strictTools?: boolean | undefined
  /** The most tokens an answer may have (`max_tokens`, which the API requires; default 4096). */
  readonly maxOutputTokens?: number | undefined
  readonly temperature?: number | undefined
  /** Extended thinking with this budget of tokens (less than `maxOutputTokens`); off by default. */
  readonly thinkingBudget?: number | undefined
  /** Retries of 429, 5xx and 529 answers and lost connections, or `false` for none. */
  readonly retry?: RetryOptions | false | undefined
}

/**
 * Builds the `LanguageModel` of a Claude model over the `HttpClient` in
 * context.
 *
 * **Example** (Building the service)
 * ```ts
 * import { Anthropic } from "@ugent/agentese/providers"
 * import { Effect } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * const model = Anthropic.make({ model: "claude-sonnet-4-5", apiKey: "sk-ant-..." })
 * const service = Effect.runSync(model.pipe(Effect.provide(FetchHttpClient.layer)))
 * console.log(typeof service.streamText)
 * // => function
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (options: Options): Effect.Effect<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const conn = Http.anthropicConnection(options)
    const settings: Api.Settings = {
      model: options.model,
      strictTools: options.strictTools ?? false,
      maxOutputTokens: options.maxOutputTokens ?? 4096,
      temperature: options.temperature,
      thinkingBudget: options.thinkingBudget
    }
    const annotate = (providerOptions: LanguageModel.ProviderOptions) =>
      Telemetry.addGenAIAnnotations(providerOptions.span, {
        provider: { name: "anthropic" },
        operation: { name: "chat" },
        request: { model: options.model, temperature: options.temperature ?? null, maxTokens: settings.maxOutputTokens }
      })
    return yield* LanguageModel.make({
      codecTransformer: Tools.codecTransformer("anthropic"),
      // System messages are gathered into the one top-level system prompt.
      supportsSystemMessagesInHistory: Effect.succeed(false),
      generateText: (providerOptions) =>
        Effect.gen(function* () {
          annotate(providerOptions)
          const { body, tools } = yield* Api.request(conn, "generateText", providerOptions, settings)
          const response = yield* Http.send(
            client,
            conn,
            "generateText",
            Http.request(conn, "POST", "v1/messages", body)
          )
          const message = yield* Http.decodeJson(conn, "generateText", response, Api.MessageSchema)
          return Api.parts(message, tools)
        }),
      streamText: (providerOptions) =>
        Stream.unwrap(
          Effect.gen(function* () {
            annotate(providerOptions)
            const { body, tools } = yield* Api.request(conn, "streamText", providerOptions, settings)
            const streamed: Api.Request = { ...body, stream: true }
            const response = yield* Http.send(
              client,
              conn,
              "streamText",
              Http.request(conn, "POST", "v1/messages", streamed)
            )
            return Api.streamParts(conn, "streamText", Http.sse(conn, "streamText", response), tools)
          })
        )
    })
  })

/**
 * The layer of a Claude model, needing an `HttpClient`.
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))

/**
 * The model as an `effect/ai` `Model` (the layer with the provider and model
 * names), for `ExecutionPlan`s.
 *
 * @category layers
 * @since 0.2.0
 */
export const model = (
  options: Options
): AiModel.Model<"anthropic", LanguageModel.LanguageModel, HttpClient.HttpClient> =>
  AiModel.make("anthropic", options.model, layer(options))
