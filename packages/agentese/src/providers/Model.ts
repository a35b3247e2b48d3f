/**
 * The model an agent uses, chosen by the environment: `UGENT_MODEL` names a
 * provider and a model, and the providers' standard variables give the keys
 * and base URLs.
 *
 * | `UGENT_MODEL`                              | API                                   | key (base URL)                           |
 * | ------------------------------------------ | ------------------------------------- | ---------------------------------------- |
 * | `openai:<model>`                           | OpenAI Chat Completions               | `OPENAI_API_KEY` (`OPENAI_BASE_URL`)     |
 * | `openai-responses:<model>`                 | OpenAI Responses                      | `OPENAI_API_KEY` (`OPENAI_BASE_URL`)     |
 * | `anthropic:<model>`                        | Anthropic Messages                    | `ANTHROPIC_API_KEY` (`ANTHROPIC_BASE_URL`) |
 * | `openai-compatible:<base-url>#<model>`     | Chat Completions at that URL (Ollama, vLLM, LM Studio) | `OPENAI_API_KEY` if set |
 *
 * A misconfiguration (no `UGENT_MODEL`, an unknown provider, a malformed
 * value, a missing key, a base URL that is not a URL) fails before any call
 * with a {@link ModelConfigError} of one line that says what to set. A base
 * URL nobody answers at, a rejected key or an unknown model are found by
 * {@link check}, a cheap call the agent runs before its first step, which
 * fails with a {@link ModelUnavailable} of one line too.
 *
 * @since 0.2.0
 */
import type { ToolError } from "@ugent/core"
import { Context, type Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Model as AiModel, type LanguageModel } from "effect/ai"
import { FetchHttpClient, HttpClient } from "effect/http"
import * as Anthropic from "./Anthropic.ts"
import * as Http from "./internal/http.ts"
import * as OpenAiChat from "./OpenAiChat.ts"
import * as OpenAiResponses from "./OpenAiResponses.ts"

/**
 * An API `UGENT_MODEL` can name.
 *
 * @category models
 * @since 0.2.0
 */
export type Provider = "openai" | "openai-responses" | "openai-compatible" | "anthropic"

const providers: ReadonlyArray<Provider> = ["openai", "openai-responses", "anthropic", "openai-compatible"]

/**
 * A model configuration: which API, which model, where, and the key.
 *
 * @category models
 * @since 0.2.0
 */
export interface Config {
  readonly provider: Provider
  readonly model: string
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  /** The variable the key comes from (and a message tells the user to set). */
  readonly keyVariable: string
  /** The variable that sets the base URL, named when it is unreachable. */
  readonly baseUrlVariable: string
}

/**
 * The environment the configuration is read from.
 *
 * @category models
 * @since 0.2.0
 */
export type Env = Readonly<Record<string, string | undefined>>

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim()

/**
 * The model configuration is missing or wrong. Its message is one line
 * that says what to set.
 *
 * @category errors
 * @since 0.2.0
 */
export class ModelConfigError extends Schema.TaggedError<ModelConfigError>()("ModelConfigError", {
  variable: Schema.String,
  problem: Schema.String,
  fix: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return oneLine(`${this.problem}: ${this.fix}`)
  }
}

/**
 * The configured model cannot be used: its server does not answer, rejects
 * the key, or does not know the model. Its message is one line that says
 * what to set or do.
 *
 * @category errors
 * @since 0.2.0
 */
export class ModelUnavailable extends Schema.TaggedError<ModelUnavailable>()("ModelUnavailable", {
  provider: Schema.String,
  model: Schema.String,
  baseUrl: Schema.String,
  reason: Schema.Literals(["unreachable", "unauthorized", "forbidden", "unknown-model", "failed"]),
  detail: Schema.String,
  fix: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return oneLine(`${this.detail}: ${this.fix}`)
  }
}

const usage = "openai:<model>, openai-responses:<model>, anthropic:<model> or openai-compatible:<base-url>#<model>"

const configError = (variable: string, problem: string, fix: string) => new ModelConfigError({ variable, problem, fix })

const httpUrl = (variable: string, value: string, example: string): Effect.Effect<string, ModelConfigError> => {
  try {
    const url = new URL(value)
    if (url.protocol === "http:" || url.protocol === "https:") return Effect.succeed(value.replace(/\/+$/, ""))
  } catch {
    // not a URL: reported below
  }
  return Effect.fail(
    configError(variable, `${variable} has "${value}", which is not an http(s) URL`, `set it to a URL like ${example}`)
  )
}

const keyOf = (env: Env, variable: string): Redacted.Redacted<string> | undefined => {
  const value = env[variable]?.trim()
  return value === undefined || value.length === 0 ? undefined : Redacted.make(value)
}

const checkModelName = (value: string, model: string, example: string): Effect.Effect<string, ModelConfigError> =>
  model.length === 0
    ? Effect.fail(configError("UGENT_MODEL", `UGENT_MODEL=${value} names no model`, `set UGENT_MODEL=${example}`))
    : /\s/.test(model)
      ? Effect.fail(
          configError("UGENT_MODEL", `UGENT_MODEL=${value} has a model name with spaces`, `set UGENT_MODEL=${example}`)
        )
      : Effect.succeed(model)

/**
 * Reads one `UGENT_MODEL` value, with the keys and base URLs from `env`.
 *
 * **Example** (Reading a configuration)
 * ```ts
 * import { Model } from "@ugent/agentese/providers"
 * import { Effect } from "effect"
 * const config = Effect.runSync(Model.parse("anthropic:claude-sonnet-4-5", { ANTHROPIC_API_KEY: "sk-ant-..." }))
 * console.log(config.provider, config.model, config.baseUrl)
 * // => anthropic claude-sonnet-4-5 https://api.anthropic.com
 * const local = Effect.runSync(Model.parse("openai-compatible:http://localhost:11434/v1#llama3.2", {}))
 * console.log(local.baseUrl, local.model, local.apiKey)
 * // => http://localhost:11434/v1 llama3.2 undefined
 * const missing = Effect.runSync(Effect.flip(Model.parse("openai:gpt-4.1-mini", {})))
 * console.log(missing.message)
 * // => UGENT_MODEL=openai:gpt-4.1-mini needs an API key: set OPENAI_API_KEY (for a server that needs no key, use UGENT_MODEL=openai-compatible:<base-url>#gpt-4.1-mini)
 * ```
 *
 * @category configuration
 * @since 0.2.0
 */
export const parse = (value: string, env: Env): Effect.Effect<Config, ModelConfigError> =>
  Effect.gen(function* () {
    const trimmed = value.trim()
    const colon = trimmed.indexOf(":")
    const named = colon < 0 ? "" : trimmed.slice(0, colon).toLowerCase()
    if (colon < 0 || named === "http" || named === "https") {
      const guess = colon < 0 && trimmed.length > 0 ? `openai:${trimmed}` : "openai-compatible:<base-url>#<model>"
      return yield* Effect.fail(
        configError("UGENT_MODEL", `UGENT_MODEL=${trimmed} names no provider`, `set UGENT_MODEL=${guess} (or ${usage})`)
      )
    }
    const rest = trimmed.slice(colon + 1).trim()
    const provider = providers.find((p) => p === named)
    if (provider === undefined) {
      return yield* Effect.fail(
        configError("UGENT_MODEL", `UGENT_MODEL=${trimmed} names an unknown provider "${named}"`, `use ${usage}`)
      )
    }
    switch (provider) {
      case "openai":
      case "openai-responses": {
        const model = yield* checkModelName(trimmed, rest, `${provider}:gpt-4.1-mini`)
        const baseUrlValue = env.OPENAI_BASE_URL?.trim()
        const baseUrl =
          baseUrlValue === undefined || baseUrlValue.length === 0
            ? Http.openAiBaseUrl
            : yield* httpUrl("OPENAI_BASE_URL", baseUrlValue, Http.openAiBaseUrl)
        const apiKey = keyOf(env, "OPENAI_API_KEY")
        if (apiKey === undefined) {
          return yield* Effect.fail(
            configError(
              "OPENAI_API_KEY",
              `UGENT_MODEL=${trimmed} needs an API key`,
              `set OPENAI_API_KEY (for a server that needs no key, use UGENT_MODEL=openai-compatible:<base-url>#${model})`
            )
          )
        }
        return {
          provider,
          model,
          baseUrl,
          apiKey,
          keyVariable: "OPENAI_API_KEY",
          baseUrlVariable: "OPENAI_BASE_URL"
        }
      }
      case "anthropic": {
        const model = yield* checkModelName(trimmed, rest, "anthropic:claude-sonnet-4-5")
        const baseUrlValue = env.ANTHROPIC_BASE_URL?.trim()
        const baseUrl =
          baseUrlValue === undefined || baseUrlValue.length === 0
            ? Http.anthropicBaseUrl
            : yield* httpUrl("ANTHROPIC_BASE_URL", baseUrlValue, Http.anthropicBaseUrl)
        const apiKey = keyOf(env, "ANTHROPIC_API_KEY")
        if (apiKey === undefined) {
          return yield* Effect.fail(
            configError("ANTHROPIC_API_KEY", `UGENT_MODEL=${trimmed} needs an API key`, "set ANTHROPIC_API_KEY")
          )
        }
        return {
          provider,
          model,
          baseUrl,
          apiKey,
          keyVariable: "ANTHROPIC_API_KEY",
          baseUrlVariable: "ANTHROPIC_BASE_URL"
        }
      }
      case "openai-compatible": {
        const hash = rest.lastIndexOf("#")
        const example = `openai-compatible:${hash < 0 ? rest || "http://localhost:11434/v1" : rest.slice(0, hash)}#<model>`
        if (hash < 0) {
          return yield* Effect.fail(
            configError(
              "UGENT_MODEL",
              `UGENT_MODEL=${trimmed} names no model after the base URL`,
              `set UGENT_MODEL=${example}`
            )
          )
        }
        const base = rest.slice(0, hash).trim()
        const model = yield* checkModelName(trimmed, rest.slice(hash + 1).trim(), example)
        const baseUrl =
          base.length === 0
            ? yield* Effect.fail(
                configError(
                  "UGENT_MODEL",
                  `UGENT_MODEL=${trimmed} names no base URL`,
                  `set UGENT_MODEL=${example.replace("<model>", model)}`
                )
              )
            : yield* Effect.mapError(httpUrl("UGENT_MODEL", base, "http://localhost:11434/v1"), () =>
                configError(
                  "UGENT_MODEL",
                  `UGENT_MODEL=${trimmed} has a base URL "${base}" that is not an http(s) URL`,
                  `set UGENT_MODEL=openai-compatible:http://localhost:11434/v1#${model}`
                )
              )
        return {
          provider,
          model,
          baseUrl,
          apiKey: keyOf(env, "OPENAI_API_KEY"),
          keyVariable: "OPENAI_API_KEY",
          baseUrlVariable: "UGENT_MODEL"
        }
      }
    }
  })

/**
 * The configuration `UGENT_MODEL` names, or none when it is not set (the
 * embedded default: no model).
 *
 * **Example** (No model configured)
 * ```ts
 * import { Model } from "@ugent/agentese/providers"
 * import { Effect, Option } from "effect"
 * console.log(Option.isNone(Effect.runSync(Model.configured({}))))
 * // => true
 * ```
 *
 * @category configuration
 * @since 0.2.0
 */
export const configured = (env: Env = process.env): Effect.Effect<Option.Option<Config>, ModelConfigError> => {
  const value = env.UGENT_MODEL?.trim()
  return value === undefined || value.length === 0
    ? Effect.succeed(Option.none())
    : Effect.map(parse(value, env), Option.some)
}

/**
 * The configuration `UGENT_MODEL` names; no `UGENT_MODEL` is a
 * `ModelConfigError` that says what to set.
 *
 * @category configuration
 * @since 0.2.0
 */
export const required = (env: Env = process.env): Effect.Effect<Config, ModelConfigError> =>
  Effect.flatMap(configured(env), (config) =>
    Option.isSome(config)
      ? Effect.succeed(config.value)
      : Effect.fail(configError("UGENT_MODEL", "No model is configured", `set UGENT_MODEL=${usage}`))
  )

/**
 * How a configuration is shown: `anthropic:claude-sonnet-4-5 at https://api.anthropic.com`
 * (never the key).
 *
 * @category configuration
 * @since 0.2.0
 */
export const describe = (config: Config): string => `${config.provider}:${config.model} at ${config.baseUrl}`

const connectionOf = (config: Config): Http.Connection => {
  const options = {
    apiKey: config.apiKey,
    baseUrl: config.baseUrl,
    keyVariable: config.keyVariable,
    retry: false as const
  }
  return config.provider === "anthropic"
    ? Http.anthropicConnection(options)
    : Http.openAiConnection(config.provider === "openai-responses" ? "OpenAiResponses" : "OpenAiChat", options)
}

const probePath = (config: Config): string => {
  const model = encodeURIComponent(config.model)
  switch (config.provider) {
    case "anthropic":
      return `v1/models/${model}`
    case "openai-compatible":
      return "models"
    default:
      return `models/${model}`
  }
}

/**
 * Checks a configuration with one cheap call (the models endpoint: the
 * model itself where the API can look it up), without retries, within
 * `timeout` (default 5 s): the server answers, accepts the key, and knows
 * the model.
 *
 * @category checking
 * @since 0.2.0
 */
export const checkConfig = (
  config: Config,
  options?: { readonly timeout?: Duration.Input | undefined }
): Effect.Effect<void, ModelUnavailable, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const connection = connectionOf(config)
    const path = probePath(config)
    const url = Http.joinUrl(config.baseUrl, path)
    const name = Http.subject(connection)
    const fail = (reason: ModelUnavailable["reason"], detail: string, fix: string) =>
      Effect.fail(
        new ModelUnavailable({
          provider: config.provider,
          model: config.model,
          baseUrl: config.baseUrl,
          reason,
          detail,
          fix
        })
      )
    const outcome = yield* Http.probe(client, connection, path, options?.timeout ?? "5 seconds")
    if (outcome._tag === "Unreachable") {
      return yield* fail(
        "unreachable",
        `Cannot reach ${Http.place(connection)} (${outcome.detail})`,
        config.provider === "openai-compatible"
          ? `start the server, or set UGENT_MODEL=openai-compatible:<base-url>#${config.model} to its URL`
          : `check the network, or set ${config.baseUrlVariable} to the right URL`
      )
    }
    const { status, body } = outcome
    if (status >= 200 && status < 300) return
    // A rate-limited answer still shows the server is there and takes the key.
    if (status === 429) return
    const said = Http.providerError(body).message
    const because = said === undefined ? "" : ` (${Http.scrub(said, config.apiKey).slice(0, 200)})`
    const answered = `${name} answered ${Http.describeStatus(status)}${because}`
    if (status === 401) {
      return yield* fail(
        "unauthorized",
        config.apiKey === undefined
          ? `${name} needs an API key: it answered 401 Unauthorized`
          : `${answered}, rejecting the API key`,
        config.apiKey === undefined ? `set ${config.keyVariable}` : `set ${config.keyVariable} to a valid API key`
      )
    }
    if (status === 403) {
      return yield* fail("forbidden", answered, `check that the key in ${config.keyVariable} may use ${config.model}`)
    }
    if (status === 404) {
      return config.provider === "openai-compatible"
        ? yield* fail(
            "failed",
            `${answered} for GET ${url}`,
            `check the base URL in UGENT_MODEL (OpenAI-compatible servers usually end in /v1)`
          )
        : yield* fail(
            "unknown-model",
            `${name} does not know the model "${config.model}" (GET ${url} answered 404)`,
            `check the model name in UGENT_MODEL${config.baseUrl === Http.openAiBaseUrl || config.baseUrl === Http.anthropicBaseUrl ? "" : `, or the base URL in ${config.baseUrlVariable}`}`
          )
    }
    return yield* fail("failed", `${answered} for GET ${url}`, "try again later, or check the base URL")
  })

/**
 * The configured model in context: its configuration, and its preflight
 * check bound to the `HttpClient` it uses.
 *
 * @category services
 * @since 0.2.0
 */
export class CurrentModel extends Context.Service<
  CurrentModel,
  { readonly config: Config; readonly check: Effect.Effect<void, ModelUnavailable> }
>()("ugent/agentese/providers/Model/CurrentModel") {}

/**
 * The preflight of the model in context (see {@link checkConfig}): run it
 * before the agent's first step, so a wrong URL, key or model name is one
 * clear line instead of a failed step.
 *
 * @category checking
 * @since 0.2.0
 */
export const check: Effect.Effect<void, ModelUnavailable, CurrentModel> = CurrentModel.use((model) => model.check)

/**
 * The `LanguageModel` of a configuration, with the `CurrentModel` and
 * `effect/ai`'s provider and model names, over the `HttpClient` in context.
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = (
  config: Config
): Layer.Layer<
  LanguageModel.LanguageModel | CurrentModel | AiModel.ProviderName | AiModel.ModelName,
  never,
  HttpClient.HttpClient
> => {
  const options = {
    model: config.model,
    apiKey: config.apiKey,
    baseUrl: config.baseUrl,
    keyVariable: config.keyVariable
  }
  const model =
    config.provider === "anthropic"
      ? Anthropic.model(options)
      : config.provider === "openai-responses"
        ? OpenAiResponses.model(options)
        : OpenAiChat.model(options)
  const current = Layer.effect(
    CurrentModel,
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      return CurrentModel.of({
        config,
        check: checkConfig(config).pipe(Effect.provideService(HttpClient.HttpClient, client))
      })
    })
  )
  return Layer.merge(model, current)
}

/**
 * The model `UGENT_MODEL` names, over the fetch `HttpClient`: what the CLI
 * and the agent use. A misconfiguration fails the layer with one line that
 * says what to set; run {@link check} before the first step to find an
 * unreachable server, a rejected key or an unknown model.
 *
 * **Example** (A misconfiguration is one line)
 * ```ts
 * import { Model } from "@ugent/agentese/providers"
 * import { Effect, Layer } from "effect"
 * const built = Layer.build(Model.fromEnv({ env: { UGENT_MODEL: "gemini:pro" } }))
 * const error = Effect.runSync(Effect.flip(Effect.scoped(built)))
 * console.log(error.message)
 * // => UGENT_MODEL=gemini:pro names an unknown provider "gemini": use openai:<model>, openai-responses:<model>, anthropic:<model> or openai-compatible:<base-url>#<model>
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const fromEnv = (options?: {
  readonly env?: Env | undefined
}): Layer.Layer<
  LanguageModel.LanguageModel | CurrentModel | AiModel.ProviderName | AiModel.ModelName,
  ModelConfigError
> => Layer.unwrap(Effect.map(required(options?.env ?? process.env), layer)).pipe(Layer.provide(FetchHttpClient.layer))
