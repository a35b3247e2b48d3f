/**
 * A model behind the OpenAI Responses API (`POST /responses`), as
 * `effect/ai`'s `LanguageModel`: the prompt as input items, the toolkit's
 * tools as flat function tools, function calls back as tool-call parts
 * (streamed argument deltas assembled, the call going by its `call_id`),
 * their outputs sent as `function_call_output` items in the next turn,
 * `generateObject` as a JSON Schema text format, reasoning summaries as
 * reasoning parts, usage and finish reasons reported. Written over Effect's
 * `HttpClient`: provide one (`FetchHttpClient.layer`).
 *
 * The whole conversation is sent each turn and nothing is stored at the
 * provider (`store: false`) unless asked. Failures are `AiError`s, as for
 * {@link OpenAiChat}: the same retries, and messages that say what to set.
 *
 * @since 0.2.0
 */
import { Effect, Layer, type Redacted, Stream } from "effect"
import { Model as AiModel, LanguageModel, Telemetry } from "effect/ai"
import { HttpClient } from "effect/http"
import * as Http from "./internal/http.ts"
import * as Api from "./internal/openAiResponses.ts"
import * as Tools from "./internal/tools.ts"

/**
 * How failed calls are retried (see `OpenAiChat.RetryOptions`).
 *
 * @category models
 * @since 0.2.0
 */
export type RetryOptions = Http.RetryOptions

/**
 * The options of a Responses API model.
 *
 * @category models
 * @since 0.2.0
 */
export interface Options {
  /** The model name: `gpt-4.1`, `o4-mini`. */
  readonly model: string
  /** Sent as `Authorization: Bearer …`. */
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  /** Default `https://api.openai.com/v1`. */
  readonly baseUrl?: string | undefined
  /** More headers for every request. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The environment variable a failed authentication tells the user to set (default `OPENAI_API_KEY`). */
  readonly keyVariable?: string | undefined
  /** How messages name the server (default `OpenAI` for OpenAI's URL). */
  readonly providerName?: string | undefined
  /** Offer tools in strict mode unless a tool's `Tool.Strict` annotation says otherwise; default false. */
  readonly strictTools?: boolean | undefined
  readonly maxOutputTokens?: number | undefined
  readonly temperature?: number | undefined
  /** Let the provider store the responses (default false). */
  readonly store?: boolean | undefined
  /** Retries of 429 and 5xx answers and lost connections, or `false` for none. */
  readonly retry?: RetryOptions | false | undefined
}

/**
 * Builds the `LanguageModel` of a Responses API model over the `HttpClient`
 * in context.
 *
 * **Example** (Building the service)
 * ```ts
 * import { OpenAiResponses } from "@ugent/agentese/providers"
 * import { Effect } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * const model = OpenAiResponses.make({ model: "gpt-4.1-mini", apiKey: "sk-..." })
 * const service = Effect.runSync(model.pipe(Effect.provide(FetchHttpClient.layer)))
 * console.log(typeof service.generateObject)
 * // => function
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (options: Options): Effect.Effect<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const conn = Http.openAiConnection("OpenAiResponses", options)
    const settings: Api.Settings = {
      model: options.model,
      strictTools: options.strictTools ?? false,
      maxOutputTokens: options.maxOutputTokens,
      temperature: options.temperature,
      store: options.store ?? false
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
          const { body, tools } = yield* Api.request(conn, "generateText", providerOptions, settings)
          const response = yield* Http.send(client, conn, "generateText", Http.request(conn, "POST", "responses", body))
          const decoded = yield* Http.decodeJson(conn, "generateText", response, Api.ResponseObject)
          return yield* Api.parts(conn, "generateText", decoded, tools)
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
              Http.request(conn, "POST", "responses", streamed)
            )
            return Api.streamParts(conn, "streamText", Http.sse(conn, "streamText", response), tools)
          })
        )
    })
  })

/**
 * The layer of a Responses API model, needing an `HttpClient`.
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
export const model = (options: Options): AiModel.Model<"openai", LanguageModel.LanguageModel, HttpClient.HttpClient> =>
  AiModel.make("openai", options.model, layer(options))
