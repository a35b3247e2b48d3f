/**
 * `web.search` asks a search provider and returns its results as
 * `{ title, url, snippet }`. The provider is a small service, {@link Provider};
 * two are built in, both over HTTP with their endpoint or key from the
 * environment: a SearXNG instance (`UGENT_SEARXNG_URL`, its JSON API) and the
 * Brave Search API (`BRAVE_SEARCH_API_KEY`). The provider's endpoint is
 * chosen by the operator, so it is exempt from web.fetch's address check for
 * that one origin, and only there. Results are cached for 15 minutes in the
 * host's `KeyValueStore`. Where no provider is configured, the tool is not
 * offered at all (see `Web.family`).
 *
 * @since 0.2.0
 */
import { Tool } from "@ugent/core"
import { Config, Context, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { KeyValueStore } from "effect/persistence"
import * as TtlCache from "../internal/web/cache.ts"
import { plainText } from "../internal/web/content.ts"
import { SearchFailed } from "./WebError.ts"

/**
 * One search result.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Result = Schema.Struct({
  title: Schema.String,
  url: Schema.String,
  /** A short plain-text excerpt of the page (tags and entities removed). */
  snippet: Schema.String
})

/**
 * @category models
 * @since 0.2.0
 */
export type Result = typeof Result.Type

/**
 * A search provider: a name and a search that returns at most `limit`
 * results, best first.
 *
 * @category services
 * @since 0.2.0
 */
export class Provider extends Context.Service<
  Provider,
  {
    readonly name: string
    readonly search: (query: string, limit: number) => Effect.Effect<ReadonlyArray<Result>, SearchFailed>
  }
>()("ugent/tools/web.search/Provider") {}

/**
 * Time a provider has to answer (15 s) unless its options say otherwise.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultProviderTimeout: Duration.Input = "15 seconds"

const failed = (provider: string, reason: string) => new SearchFailed({ provider, reason })

const statusReason = (provider: string, status: number): string =>
  status === 401 || status === 403
    ? `the provider refused the request (HTTP ${status}): ${
        provider === "searxng"
          ? "the instance must allow the json format (search.formats in its settings.yml)"
          : "check BRAVE_SEARCH_API_KEY"
      }`
    : status === 429
      ? "the provider's rate limit was reached (HTTP 429); wait before searching again"
      : `the provider answered HTTP ${status}`

const exchange = <A>(
  provider: string,
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  timeout: Duration.Input,
  read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, unknown>
): Effect.Effect<A, SearchFailed> =>
  Effect.scoped(
    Effect.gen(function* () {
      const response = yield* client.execute(request)
      if (response.status < 200 || response.status >= 300) {
        return yield* failed(provider, statusReason(provider, response.status))
      }
      return yield* read(response)
    })
  ).pipe(
    Effect.provideService(HttpClient.TracerPropagationEnabled, false),
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(failed(provider, `no answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}`))
    }),
    Effect.catch((error) =>
      Effect.fail(
        error instanceof SearchFailed
          ? error
          : Schema.isSchemaError(error)
            ? failed(provider, "the answer does not have the provider's documented shape")
            : failed(
                provider,
                `the provider could not be reached (${(error as { message?: string }).message ?? String(error)})`
              )
      )
    )
  )

const SearxngAnswer = Schema.Struct({
  results: Schema.Array(
    Schema.Struct({
      url: Schema.String,
      title: Schema.String,
      content: Schema.optionalKey(Schema.NullOr(Schema.String))
    })
  )
})

/**
 * A SearXNG instance as the provider, through its JSON API
 * (`GET <url>/search?q=…&format=json`; the instance must list `json` in
 * `search.formats` of its `settings.yml`). SearXNG pages its results; the
 * first page is used, cut to `limit`.
 *
 * @category constructors
 * @since 0.2.0
 */
export const searxng = (options: {
  /** The instance's base URL, e.g. `http://localhost:8888` or `https://search.example/searx/`. */
  readonly url: string
  readonly timeout?: Duration.Input | undefined
}): Effect.Effect<Provider["Service"], never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const base = options.url.endsWith("/") ? options.url : `${options.url}/`
    return Provider.of({
      name: "searxng",
      search: (query, limit) =>
        exchange(
          "searxng",
          client,
          HttpClientRequest.get(new URL("search", base), {
            urlParams: { q: query, format: "json", pageno: "1" },
            headers: { accept: "application/json" }
          }),
          options.timeout ?? defaultProviderTimeout,
          (response) =>
            Effect.flatMap(response.json, Schema.decodeUnknownEffect(SearxngAnswer)).pipe(
              Effect.map((answer) =>
                answer.results.slice(0, limit).map((r) => ({
                  title: plainText(r.title),
                  url: r.url,
                  snippet: plainText(r.content ?? "")
                }))
              )
            )
        )
    })
  })

const BraveAnswer = Schema.Struct({
  web: Schema.optionalKey(
    Schema.Struct({
      results: Schema.Array(
        Schema.Struct({
          title: Schema.String,
          url: Schema.String,
          description: Schema.optionalKey(Schema.String)
        })
      )
    })
  )
})

/**
 * The Brave Search API as the provider (`GET /res/v1/web/search?q=…&count=…`
 * with the key in `X-Subscription-Token`). Brave returns at most 20 results
 * per request; its descriptions carry `<strong>` marks, removed here.
 *
 * @category constructors
 * @since 0.2.0
 */
export const brave = (options: {
  readonly apiKey: string | Redacted.Redacted
  /** The API origin, `https://api.search.brave.com` unless a proxy or a test stands in. */
  readonly endpoint?: string | undefined
  readonly timeout?: Duration.Input | undefined
}): Effect.Effect<Provider["Service"], never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const key = typeof options.apiKey === "string" ? options.apiKey : Redacted.value(options.apiKey)
    const endpoint = new URL("/res/v1/web/search", options.endpoint ?? "https://api.search.brave.com")
    return Provider.of({
      name: "brave",
      search: (query, limit) =>
        exchange(
          "brave",
          client,
          HttpClientRequest.get(endpoint, {
            urlParams: { q: query, count: String(Math.min(limit, 20)) },
            headers: { accept: "application/json", "x-subscription-token": key }
          }),
          options.timeout ?? defaultProviderTimeout,
          (response) =>
            Effect.flatMap(response.json, Schema.decodeUnknownEffect(BraveAnswer)).pipe(
              Effect.map((answer) =>
                (answer.web?.results ?? []).slice(0, limit).map((r) => ({
                  title: plainText(r.title),
                  url: r.url,
                  snippet: plainText(r.description ?? "")
                }))
              )
            )
        )
    })
  })

/**
 * The provider the environment configures: SearXNG when `UGENT_SEARXNG_URL`
 * is set, else Brave when `BRAVE_SEARCH_API_KEY` is set (at
 * `UGENT_BRAVE_SEARCH_URL` when that is set), else none. Read through
 * Effect's `ConfigProvider`, so a test can give its own environment.
 *
 * **Example** (No provider configured)
 * ```ts
 * import { WebSearch } from "@ugent/tools"
 * import { ConfigProvider, Effect, Option } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * const provider = await Effect.runPromise(
 *   WebSearch.fromConfig.pipe(
 *     Effect.provide(FetchHttpClient.layer),
 *     Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
 *   )
 * )
 * console.log(Option.isNone(provider))
 * // => true
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const fromConfig: Effect.Effect<
  Option.Option<Provider["Service"]>,
  Config.ConfigError,
  HttpClient.HttpClient
> = Effect.gen(function* () {
  const searxngUrl = yield* Config.option(Config.NonEmptyString("UGENT_SEARXNG_URL"))
  if (Option.isSome(searxngUrl)) return Option.some(yield* searxng({ url: searxngUrl.value }))
  const braveKey = yield* Config.option(Config.Redacted("BRAVE_SEARCH_API_KEY"))
  if (Option.isSome(braveKey) && Redacted.value(braveKey.value) !== "") {
    const endpoint = yield* Config.option(Config.NonEmptyString("UGENT_BRAVE_SEARCH_URL"))
    return Option.some(yield* brave({ apiKey: braveKey.value, endpoint: Option.getOrUndefined(endpoint) }))
  }
  return Option.none()
})

/**
 * A layer of the SearXNG provider.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerSearxng = (
  options: Parameters<typeof searxng>[0]
): Layer.Layer<Provider, never, HttpClient.HttpClient> => Layer.effect(Provider, searxng(options))

/**
 * A layer of the Brave Search provider.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerBrave = (options: Parameters<typeof brave>[0]): Layer.Layer<Provider, never, HttpClient.HttpClient> =>
  Layer.effect(Provider, brave(options))

/**
 * Results shown when the call gives no `limit`.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultLimit = 10

/**
 * @category schemas
 * @since 0.2.0
 */
export const Input = Schema.Struct({
  query: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(400)).annotate({
    description: "What to search for."
  }),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 })).annotate({
      description: `How many results to return (default ${defaultLimit}, at most 20).`
    })
  )
})

/**
 * @category models
 * @since 0.2.0
 */
export type Input = typeof Input.Type

/**
 * @category schemas
 * @since 0.2.0
 */
export const Output = Schema.Struct({
  query: Schema.String,
  provider: Schema.String,
  results: Schema.Array(Result),
  notice: Schema.optionalKey(Schema.String)
})

/**
 * @category models
 * @since 0.2.0
 */
export type Output = typeof Output.Type

/**
 * Everything `web.search` may fail with.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Failure = SearchFailed

const Results = Schema.Array(Result)

/**
 * Builds a `web.search` tool with a cache lifetime (15 minutes by default).
 * It needs a {@link Provider} and a `KeyValueStore`.
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (options: { readonly cacheTtl?: Duration.Input | undefined } = {}) => {
  const ttlMillis = Duration.toMillis(options.cacheTtl ?? "15 minutes")
  const caches = new WeakMap<KeyValueStore.KeyValueStore, TtlCache.TtlCache<ReadonlyArray<Result>>>()
  return Tool.make({
    name: "web.search",
    description:
      "Search the web. Returns results as { title, url, snippet }, best first (limit, default 10, at most 20). Fetch a result's page with web.fetch.",
    input: Input,
    output: Output,
    failure: Failure,
    trust: 0,
    effects: { callsNetwork: true, idempotent: true },
    run: ({ query, limit }) =>
      Effect.gen(function* () {
        const provider = yield* Provider
        const store = yield* KeyValueStore.KeyValueStore
        let cache = caches.get(store)
        if (cache === undefined) {
          cache = TtlCache.make(store, "web.search", Results, ttlMillis)
          caches.set(store, cache)
        }
        const wanted = limit ?? defaultLimit
        const normalized = query.trim().replace(/\s+/g, " ")
        const key = [provider.name, String(wanted), normalized]
        const hit = yield* cache.get(key)
        const results = Option.isSome(hit) ? hit.value : yield* provider.search(normalized, wanted)
        if (Option.isNone(hit)) yield* cache.set(key, results)
        return {
          query: normalized,
          provider: provider.name,
          results,
          ...(results.length === 0 ? { notice: "No results. Try other or fewer words." } : {})
        }
      })
  })
}

/**
 * The `web.search` tool with the default cache lifetime.
 *
 * **Example** (Searching through a provider of fixed results)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { WebSearch } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { KeyValueStore } from "effect/persistence"
 * const fixed = WebSearch.Provider.of({
 *   name: "fixed",
 *   search: (query) => Effect.succeed([{ title: `About ${query}`, url: "https://example.com/", snippet: "An example." }])
 * })
 * const out = await Effect.runPromise(
 *   WebSearch.search.run({ query: "effect  systems" }).pipe(
 *     Effect.provideService(WebSearch.Provider, fixed),
 *     Effect.provide([KeyValueStore.layerMemory, Trust.grant(0)])
 *   )
 * )
 * console.log(out.results[0]?.title)
 * // => About effect systems
 * ```
 *
 * @category tools
 * @since 0.2.0
 */
export const search = make()
