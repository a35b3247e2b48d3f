/**
 * The web family: `world.tools.web.fetch` always, `world.tools.web.search`
 * when a search provider is configured (the host provides a
 * `WebSearch.Provider`, or the environment names one: `UGENT_SEARXNG_URL`,
 * `BRAVE_SEARCH_API_KEY`). Both tools are read-only (L0) and declare that
 * they call the network. The host provides a `KeyValueStore` for their
 * 15-minute cache (`KeyValueStore.layerMemory`, or `KeyValueStore.layerSql`
 * of `effect/persistence` on the SQLite or PostgreSQL client of the
 * stores); it may provide the `Dns` service of `effect/net`, else the
 * system resolver is used.
 *
 * @since 0.2.0
 */
import * as NodeDns from "@effect/platform-node/NodeDns"
import { Family, Tool } from "@ugent/core"
import { Context, Effect, Layer, Option } from "effect"
import { HttpClient, type HttpClientError } from "effect/http"
import { Dns } from "effect/net"
import * as WebFetch from "./Fetch.ts"
import * as WebSearch from "./Search.ts"

/**
 * The search provider's client: Node's HTTP client, loaded with its first
 * request, so a server without a provider (or that never searches) does not
 * load node:http and TLS at start-up.
 */
const lazyNodeHttp = Effect.gen(function* () {
  const scope = yield* Effect.scope
  const real = yield* Effect.cached(
    Effect.promise(() => import("../internal/web/client.ts")).pipe(
      Effect.flatMap((client) => Layer.buildWithScope(client.plainLayer, scope)),
      Effect.map((context) => Context.get(context, HttpClient.HttpClient))
    )
  )
  return HttpClient.makeWith<HttpClientError.HttpClientError, never, HttpClientError.HttpClientError, never>(
    (request) => Effect.flatMap(Effect.zip(real, request), ([client, r]) => client.execute(r)),
    Effect.succeed
  )
})

/**
 * How the family is built: the fetch allow-list, limits and user agent (see
 * `WebFetch.Options`); `limits.cacheTtl` applies to both tools.
 *
 * @category models
 * @since 0.2.0
 */
export type Options = WebFetch.Options

/**
 * The web family. Building it fails with `WebError.InvalidAllowList` when an
 * allow-list entry cannot be read, and with a `ConfigError` when the
 * environment holds a malformed provider setting.
 *
 * **Example** (No provider configured: only web.fetch is offered)
 * ```ts
 * import { Web } from "@ugent/tools"
 * import { ConfigProvider, Effect } from "effect"
 * import { KeyValueStore } from "effect/persistence"
 * const tools = await Effect.runPromise(
 *   Effect.scoped(Web.family({ allowHosts: ["127.0.0.1:8080"] }).build).pipe(
 *     Effect.provide(KeyValueStore.layerMemory),
 *     Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
 *   )
 * )
 * console.log(Object.keys(tools))
 * // => [ 'web.fetch' ]
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const family = (options: Options = {}) =>
  Family.effect({
    name: "web",
    prefix: "world.tools",
    tools: Effect.gen(function* () {
      const hostDns = yield* Effect.serviceOption(Dns.Dns)
      const dns = Option.isSome(hostDns) ? hostDns.value : yield* Effect.orDie(NodeDns.make())
      const fetch = Tool.wrap(
        yield* WebFetch.make(options),
        (run) => (input) => Effect.provideService(run(input), Dns.Dns, dns)
      )
      const hostProvider = yield* Effect.serviceOption(WebSearch.Provider)
      // The provider's own endpoint is the operator's choice: a plain client, kept at that origin.
      const provider = Option.isSome(hostProvider)
        ? hostProvider
        : yield* WebSearch.fromConfig.pipe(Effect.provideService(HttpClient.HttpClient, yield* lazyNodeHttp))
      const searchWith = (chosen: WebSearch.Provider["Service"]) =>
        Tool.wrap(
          WebSearch.make({ cacheTtl: options.limits?.cacheTtl }),
          (run) => (input) => Effect.provideService(run(input), WebSearch.Provider, chosen)
        )
      const tools: {
        readonly "web.fetch": typeof fetch
        readonly "web.search"?: ReturnType<typeof searchWith>
      } = Option.isSome(provider)
        ? { "web.fetch": fetch, "web.search": searchWith(provider.value) }
        : { "web.fetch": fetch }
      return tools
    }),
    present: {
      "web.fetch": (o) =>
        o.redirect !== undefined
          ? { summary: `Redirected to ${o.redirect.location} (HTTP ${o.redirect.status}); fetch it to follow` }
          : {
              summary: `Fetched ${o.title === undefined ? o.finalUrl : `"${o.title}" (${o.finalUrl})`}: characters ${o.startIndex}-${o.startIndex + o.content.length} of ${o.totalLength}`,
              next: `call world.tools.web.fetch again with a smaller maxLength (startIndex ${o.startIndex})`
            },
      "web.search": (o) => ({
        summary: `Found ${o.results.length} result${o.results.length === 1 ? "" : "s"} for "${o.query}" (${o.provider})`,
        next: "search again with a smaller limit"
      })
    }
  })
