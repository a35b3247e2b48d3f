/**
 * `web.fetch` fetches a web page over http or https and returns its text:
 * HTML as Markdown (or raw), `text/*`, JSON and XML as they are, a window of
 * `maxLength` characters at a time with `nextIndex` to continue. It is
 * read-only (trust L0) but reaches the open world, so it declares
 * `callsNetwork`.
 *
 * It reaches public internet addresses only. Every URL, and every redirect,
 * is checked after DNS resolution on every address the name resolves to:
 * loopback, private, carrier-grade NAT, link-local (cloud metadata
 * included), multicast, unspecified, broadcast, reserved and documentation
 * ranges are refused, in any spelling (decimal, octal, hex and short IPv4
 * forms, IPv6 forms that embed an IPv4 address, `localhost` names), and the
 * connection goes to the checked addresses, with no second lookup. An
 * operator may exempt hosts or ranges (`allowHosts`). Redirects to the same
 * host are followed (5 at most); a redirect to another host is reported, to
 * be fetched on purpose. Bodies are read up to 5 MB, connections must open
 * within 10 s and the whole fetch end within 30 s. Results are cached for 15
 * minutes in the host's `KeyValueStore`.
 *
 * @since 0.2.0
 */
import { Tool, ToolError } from "@ugent/core"
import { Clock, Duration, Effect, Option, Schema } from "effect"
import { Dns } from "effect/net"
import { KeyValueStore } from "effect/persistence"
import * as allowList from "../internal/web/allowList.ts"
import * as TtlCache from "../internal/web/cache.ts"
import { decode, kindOf, parseContentType, window } from "../internal/web/content.ts"
import { check, parseUrl, type Target } from "../internal/web/guard.ts"
import {
  AddressRefused,
  FetchFailed,
  FetchTimeout,
  HostNotFound,
  HttpStatus,
  type InvalidAllowList,
  NotConvertible,
  NotText,
  TooManyRedirects
} from "./WebError.ts"

// The HTTP client (node:http, TLS) and the HTML converter's threads (turndown and its DOM load in them only) start
// with the first fetch that needs them: a server that never fetches does not pay for them at start-up.
const client = Effect.promise(() => import("../internal/web/client.ts"))
const markdown = Effect.promise(() => import("../internal/web/markdown.ts"))

/**
 * The limits of `web.fetch`.
 *
 * @category models
 * @since 0.2.0
 */
export interface Limits {
  /** Bytes of a body read at most (5 MB); the rest is not read, and the result says so. */
  readonly maxBytes: number
  /** Time to open a connection, TCP and TLS (10 s). */
  readonly connectTimeout: Duration.Input
  /** Time for the whole fetch, redirects and body included (30 s). */
  readonly timeout: Duration.Input
  /** Same-host redirects followed at most (5). */
  readonly maxRedirects: number
  /** The largest `maxLength` a call may ask for (100,000 characters). */
  readonly maxLength: number
  /** How long a result is cached (15 minutes). */
  readonly cacheTtl: Duration.Input
  /** Time to convert a page's HTML to Markdown, in a worker thread, waiting for one included (15 s). */
  readonly convertTimeout: Duration.Input
}

/**
 * The default limits.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultLimits: Limits = {
  maxBytes: 5 * 1024 * 1024,
  connectTimeout: "10 seconds",
  timeout: "30 seconds",
  maxRedirects: 5,
  maxLength: 100_000,
  cacheTtl: "15 minutes",
  convertTimeout: "15 seconds"
}

/**
 * Characters shown by a call that gives no `maxLength`.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultMaxLength = 5000

/**
 * How a `web.fetch` tool is built.
 *
 * `allowHosts` exempts destinations from the address check, for a recipe
 * that must reach an intranet or a test server. Each entry is one of:
 * - a host, by name or IP address, with an optional port: `docs.internal`,
 *   `127.0.0.1:8080`, `[::1]:3000` (without a port, every port of the host);
 *   names and addresses are normalized as URLs are, so `127.1` and
 *   `127.0.0.1` are one host;
 * - a subdomain pattern: `*.corp.example` (its subdomains, not itself);
 * - a CIDR range: `10.1.0.0/16`, `fd00::/8`, exempting any address a name
 *   resolves to inside it (on any port).
 *
 * An entry exempts what it names and nothing more: a redirect is checked
 * again on its own target, so a redirect from an allowed `127.0.0.1:8080`
 * to `127.0.0.1:8081`, or from an allowed name to a private address outside
 * the list, is refused. Results fetched through the list are cached apart
 * from public ones, so a tool with another list never sees them.
 *
 * @category models
 * @since 0.2.0
 */
export interface Options {
  readonly allowHosts?: ReadonlyArray<string> | undefined
  readonly limits?: Partial<Limits> | undefined
  /** The `User-Agent` header (default `ugent-web-fetch/0.2`). */
  readonly userAgent?: string | undefined
}

/**
 * The input of a `web.fetch` tool whose `maxLength` may go up to `maxLength`.
 *
 * @category schemas
 * @since 0.2.0
 */
export const makeInput = (maxLength: number) =>
  Schema.Struct({
    url: Schema.String.annotate({ description: "The http or https URL to fetch." }),
    method: Schema.optionalKey(
      Schema.Literals(["GET", "HEAD"]).annotate({
        description: "GET (default) returns the content; HEAD returns the status and type without the content.",
        default: "GET" as const
      })
    ),
    maxLength: Schema.optionalKey(
      Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxLength })).annotate({
        description: `How many characters to show (default ${Math.min(defaultMaxLength, maxLength)}, at most ${maxLength}).`,
        default: Math.min(defaultMaxLength, maxLength)
      })
    ),
    startIndex: Schema.optionalKey(
      Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
        description: "First character to show (default 0). Use the nextIndex of a previous call to continue.",
        default: 0
      })
    ),
    raw: Schema.optionalKey(
      Schema.Boolean.annotate({
        description: "Return HTML as it is instead of converting it to Markdown.",
        default: false
      })
    )
  })

/**
 * @category schemas
 * @since 0.2.0
 */
export const Input = makeInput(defaultLimits.maxLength)

/**
 * @category models
 * @since 0.2.0
 */
export type Input = typeof Input.Type

/**
 * A redirect to another host, reported rather than followed.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Redirect = Schema.Struct({ location: Schema.String, status: Schema.Int })

/**
 * @category schemas
 * @since 0.2.0
 */
export const Output = Schema.Struct({
  /** The URL asked for, normalized (no fragment). */
  url: Schema.String,
  /** The URL the content came from, after same-host redirects. */
  finalUrl: Schema.String,
  status: Schema.Int,
  /** The media type the server declared (`""` when it declared none). */
  contentType: Schema.String,
  /** The length the server declared, in bytes, or `null`. */
  contentLength: Schema.NullOr(Schema.Int),
  title: Schema.optionalKey(Schema.String),
  /** The shown characters: Markdown for HTML (unless `raw`), the text otherwise. */
  content: Schema.String,
  startIndex: Schema.Int,
  /** Where the next call continues, or `null` at the end. */
  nextIndex: Schema.NullOr(Schema.Int),
  /** Characters in the whole converted text. */
  totalLength: Schema.Int,
  /** Characters follow the shown ones. */
  truncated: Schema.Boolean,
  /** The body was longer than the byte limit and only its beginning was read. */
  bodyTruncated: Schema.Boolean,
  redirect: Schema.optionalKey(Redirect),
  notice: Schema.optionalKey(Schema.String),
  /** When the page was fetched (ISO 8601): earlier than now when it came from the cache. */
  fetchedAt: Schema.String
})

/**
 * @category models
 * @since 0.2.0
 */
export type Output = typeof Output.Type

/**
 * Everything `web.fetch` may fail with.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Failure = Schema.Union([
  ToolError.InvalidInput,
  AddressRefused,
  HostNotFound,
  FetchFailed,
  FetchTimeout,
  HttpStatus,
  NotText,
  NotConvertible,
  TooManyRedirects
])

/**
 * @category models
 * @since 0.2.0
 */
export type Failure = typeof Failure.Type

// What the cache holds: the whole converted text, so every window of it is a hit.
const Page = Schema.Struct({
  finalUrl: Schema.String,
  status: Schema.Int,
  contentType: Schema.String,
  contentLength: Schema.NullOr(Schema.Int),
  title: Schema.optionalKey(Schema.String),
  text: Schema.String,
  bodyTruncated: Schema.Boolean,
  redirect: Schema.optionalKey(Redirect),
  fetchedAt: Schema.Number,
  /** Something the caller should know about the conversion. */
  note: Schema.optionalKey(Schema.String),
  /** Some step was reached through the allow-list. */
  exempt: Schema.Boolean
})
type Page = typeof Page.Type

const isRedirect = (status: number): boolean =>
  status === 301 || status === 302 || status === 303 || status === 307 || status === 308

const contentLengthOf = (header: string | undefined): number | null =>
  header !== undefined && /^\d{1,15}$/.test(header) ? Number(header) : null

const present = (url: URL, page: Page, startIndex: number, maxLength: number, maxBytes: number): Output => {
  const { content, nextIndex } = window(page.text, startIndex, maxLength)
  const notices: Array<string> = []
  if (page.note !== undefined) notices.push(page.note)
  if (page.redirect === undefined) {
    if (startIndex > page.text.length && page.text.length > 0) {
      notices.push(`startIndex ${startIndex} is past the end of the content (${page.text.length} characters).`)
    }
    if (nextIndex !== null) notices.push(`More content follows: call again with startIndex ${nextIndex}.`)
    if (page.bodyTruncated) {
      notices.push(`The page is larger than ${maxBytes} bytes; only its first ${maxBytes} bytes were read.`)
    }
  }
  return {
    url: url.href,
    finalUrl: page.finalUrl,
    status: page.status,
    contentType: page.contentType,
    contentLength: page.contentLength,
    ...(page.title === undefined ? {} : { title: page.title }),
    content,
    startIndex,
    nextIndex,
    totalLength: page.text.length,
    truncated: nextIndex !== null,
    bodyTruncated: page.bodyTruncated,
    ...(page.redirect === undefined ? {} : { redirect: page.redirect }),
    ...(notices.length === 0 ? {} : { notice: notices.join(" ") }),
    fetchedAt: new Date(page.fetchedAt).toISOString()
  }
}

const ttlText = (millis: number): string =>
  millis >= 60_000 && millis % 60_000 === 0
    ? `${millis / 60_000} minute${millis === 60_000 ? "" : "s"}`
    : Duration.format(Duration.millis(millis))

interface Settings {
  readonly allow: allowList.AllowList
  readonly limits: Limits
  readonly userAgent: string
}

const fetchPage = (
  first: Target,
  method: "GET" | "HEAD",
  raw: boolean,
  settings: Settings,
  dns: Dns.Dns["Service"]
): Effect.Effect<Page, Failure> =>
  Effect.gen(function* () {
    const { limits } = settings
    const connectTimeoutMillis = Duration.toMillis(limits.connectTimeout)
    let target = first
    let exempt = first.exempt
    let redirects = 0
    while (true) {
      const response = yield* Effect.flatMap(client, (c) =>
        c.request(target, {
          method,
          userAgent: settings.userAgent,
          maxBytes: limits.maxBytes,
          connectTimeoutMillis
        })
      )
      const { mediaType, charset } = parseContentType(response.headers["content-type"])
      const fetchedAt = yield* Clock.currentTimeMillis
      const base = {
        finalUrl: target.url.href,
        status: response.status,
        contentType: mediaType,
        contentLength: contentLengthOf(response.headers["content-length"]),
        fetchedAt,
        exempt
      }
      const location = response.headers.location
      if (isRedirect(response.status) && location !== undefined) {
        let next: URL
        try {
          next = new URL(location, target.url)
        } catch {
          return yield* new HttpStatus({ url: target.url.href, status: response.status })
        }
        next.hash = ""
        next.username = ""
        next.password = ""
        const sameHost =
          (next.protocol === "http:" || next.protocol === "https:") &&
          allowList.normalizeHostname(next.hostname) === target.hostname
        if (!sameHost) {
          return {
            ...base,
            text: `Redirected to ${next.href} (HTTP ${response.status}), another host; fetch it to follow.`,
            bodyTruncated: false,
            redirect: { location: next.href, status: response.status }
          }
        }
        redirects += 1
        if (redirects > limits.maxRedirects) {
          return yield* new TooManyRedirects({ url: first.url.href, limit: limits.maxRedirects })
        }
        target = yield* check(next, settings.allow, dns, target.url.href)
        exempt ||= target.exempt
        continue
      }
      if (response.status < 200 || response.status >= 300) {
        return yield* new HttpStatus({ url: target.url.href, status: response.status })
      }
      if (method === "HEAD") return { ...base, text: "", bodyTruncated: false }
      const kind = kindOf(mediaType, charset, response.body)
      if (kind === undefined) return yield* new NotText({ url: target.url.href, contentType: mediaType })
      const text = decode(response.body, charset, kind)
      if (kind === "html" && !raw) {
        const converted = yield* Effect.flatMap(markdown, (m) =>
          m.convert(text, target.url.href, limits.convertTimeout)
        )
        if (converted._tag === "Unconverted") {
          return yield* new NotConvertible({ url: target.url.href, reason: converted.reason, detail: converted.detail })
        }
        return {
          ...base,
          ...(converted.title === undefined ? {} : { title: converted.title }),
          text: converted.markdown,
          bodyTruncated: response.bodyTruncated
        }
      }
      return { ...base, text, bodyTruncated: response.bodyTruncated }
    }
  })

/**
 * Builds a `web.fetch` tool: the allow-list is checked here, and fails the
 * build when an entry cannot be read. The tool needs a `KeyValueStore` (its
 * cache) and the `Dns` service of `effect/net` (the system resolver is
 * `NodeDns.layer` of `@effect/platform-node`; tests give a static one).
 *
 * **Example** (Fetching a page of a local server the allow-list names)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { WebFetch } from "@ugent/tools"
 * import { NodeDns } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { KeyValueStore } from "effect/persistence"
 * import { createServer } from "node:http"
 * const server = createServer((_req, res) => {
 *   res.writeHead(200, { "content-type": "text/html" })
 *   res.end("<h1>Hello</h1><p>from <b>here</b></p>")
 * })
 * await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
 * const { port } = server.address() as { port: number }
 * const fetchTool = await Effect.runPromise(WebFetch.make({ allowHosts: [`127.0.0.1:${port}`] }))
 * const page = await Effect.runPromise(
 *   fetchTool.run({ url: `http://127.0.0.1:${port}/` }).pipe(Effect.provide([KeyValueStore.layerMemory, NodeDns.layer, Trust.grant(0)]))
 * )
 * console.log(JSON.stringify(page.content))
 * // => "# Hello\n\nfrom **here**"
 * server.close()
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (options: Options = {}) => {
  const compiled = allowList.compile(options.allowHosts ?? [])
  if (!("fingerprint" in compiled)) return Effect.fail(compiled as InvalidAllowList)
  return Effect.succeed(build(compiled, options))
}

const build = (allow: allowList.AllowList, options: Options) => {
  const limits: Limits = { ...defaultLimits, ...options.limits }
  const settings: Settings = { allow, limits, userAgent: options.userAgent ?? "ugent-web-fetch/0.2" }
  const timeoutMillis = Duration.toMillis(limits.timeout)
  const ttlMillis = Duration.toMillis(limits.cacheTtl)
  const caches = new WeakMap<KeyValueStore.KeyValueStore, TtlCache.TtlCache<Page>>()
  const cacheOf = (store: KeyValueStore.KeyValueStore): TtlCache.TtlCache<Page> => {
    let cache = caches.get(store)
    if (cache === undefined) {
      cache = TtlCache.make(store, "web.fetch", Page, ttlMillis)
      caches.set(store, cache)
    }
    return cache
  }
  const input = makeInput(limits.maxLength)
  return Tool.make({
    name: "web.fetch",
    description: `Fetch a public http(s) page as text: HTML as Markdown (raw: true for HTML), text and JSON as they are; binary content is refused. Shows maxLength characters (default ${defaultMaxLength}) from startIndex (continue at nextIndex). A redirect to another host is reported, not followed. Cached for ${ttlText(ttlMillis)}.`,
    input,
    output: Output,
    failure: Failure,
    trust: 0,
    effects: { callsNetwork: true, idempotent: true },
    run: (args: typeof input.Type) =>
      Effect.gen(function* () {
        const url = yield* parseUrl("web.fetch", args.url)
        const method = args.method ?? "GET"
        const raw = args.raw === true
        const startIndex = args.startIndex ?? 0
        const maxLength = args.maxLength ?? Math.min(defaultMaxLength, limits.maxLength)
        if (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > limits.maxLength) {
          return yield* new ToolError.InvalidInput({
            tool: "web.fetch",
            issues: `maxLength must be an integer from 1 to ${limits.maxLength} (got ${maxLength})`
          })
        }
        if (!Number.isInteger(startIndex) || startIndex < 0) {
          return yield* new ToolError.InvalidInput({
            tool: "web.fetch",
            issues: `startIndex must be an integer of at least 0 (got ${startIndex}); use 0 for the beginning`
          })
        }
        const dns = yield* Dns.Dns
        const cache = cacheOf(yield* KeyValueStore.KeyValueStore)
        const key = (exempt: boolean) => [
          method,
          raw ? "raw" : "markdown",
          exempt ? allow.fingerprint : "public",
          url.href
        ]
        // The time limit covers the first lookup too: a resolver that never answers is a timeout, not a hang.
        const page = yield* Effect.gen(function* () {
          // The address check comes before the cache, so a cached page is never shown for an address now refused.
          const first = yield* check(url, allow, dns)
          const hit = yield* cache.get(key(first.exempt))
          if (Option.isSome(hit)) return hit.value
          const fetched = yield* fetchPage(first, method, raw, settings, dns)
          yield* cache.set(key(fetched.exempt), fetched)
          return fetched
        }).pipe(
          Effect.timeoutOrElse({
            duration: timeoutMillis,
            orElse: () => Effect.fail(new FetchTimeout({ url: url.href, phase: "total", millis: timeoutMillis }))
          })
        )
        return present(url, page, startIndex, maxLength, limits.maxBytes)
      })
  })
}

/**
 * The `web.fetch` tool with the default limits and no allow-list.
 *
 * @category tools
 * @since 0.2.0
 */
export const fetch = build(allowList.empty, {})
