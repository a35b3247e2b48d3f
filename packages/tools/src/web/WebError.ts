/**
 * The typed failures of the web tools. Each says what went wrong in words a
 * person or a model can act on, and what to do next: an address the fetch
 * tool refuses to reach (loopback, private, link-local, cloud metadata, …),
 * a host that does not resolve, a connection or time limit, a status that is
 * not a success, content that is not text, HTML the converter cannot turn
 * into Markdown, too many redirects, a search
 * provider that failed, and an allow-list the operator wrote wrong.
 *
 * @since 0.2.0
 */
import type { ToolError } from "@ugent/core"
import { Schema } from "effect"

/**
 * The URL leads to an address the fetch tool does not reach: loopback,
 * private, link-local (cloud metadata included), carrier-grade NAT,
 * multicast, unspecified, broadcast, reserved or documentation ranges, the
 * same behind an IPv6 form that embeds an IPv4 address, or a `localhost`
 * name. Checked after DNS resolution on every address, and again on every
 * redirect; no connection was made.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { WebError } from "@ugent/tools"
 * const e = new WebError.AddressRefused({ url: "http://169.254.169.254/latest/meta-data/", host: "169.254.169.254", address: "169.254.169.254", range: "link-local" })
 * console.log(e.message)
 * // => Refused http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a link-local address (cloud metadata services live there), and web.fetch reaches public internet addresses only. Nothing was sent. If this host is meant to be reachable, the operator can allow-list it.
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class AddressRefused extends Schema.TaggedError<AddressRefused>()("AddressRefused", {
  url: Schema.String,
  host: Schema.String,
  /** The refused address, or `null` when the name itself is refused (`localhost`). */
  address: Schema.NullOr(Schema.String),
  /** The range it lies in: `loopback`, `private`, `link-local`, … */
  range: Schema.String,
  /** The URL whose redirect led here. */
  redirectedFrom: Schema.optionalKey(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "denied"
  override get message(): string {
    const via = this.redirectedFrom === undefined ? "" : ` (redirected from ${this.redirectedFrom})`
    const what =
      this.address === null
        ? `${this.host} names the local machine`
        : this.address === this.host
          ? `${this.host} is ${addressOf(this.range)}`
          : `${this.host} resolves to ${this.address}, ${addressOf(this.range)}`
    return `Refused ${this.url}${via}: ${what}, and web.fetch reaches public internet addresses only. Nothing was sent. If this host is meant to be reachable, the operator can allow-list it.`
  }
}

const names: Record<string, string> = {
  "carrier-grade-nat": "carrier-grade NAT (100.64.0.0/10)",
  "unique-local": "private (unique local, fc00::/7)",
  "site-local": "deprecated site-local (fec0::/10)",
  "ipv4-compatible": "IPv4-compatible IPv6 (::/96)",
  "nat64-local": "local-use NAT64 (64:ff9b:1::/48)"
}

const notes: Record<string, string> = {
  "link-local": " (cloud metadata services live there)"
}

const addressOf = (range: string): string => {
  const name = names[range] ?? range
  return `${/^[aeiou]/.test(name) ? "an" : "a"} ${name} address${notes[range] ?? ""}`
}

/**
 * The host name does not resolve (no such name, or no address for it).
 *
 * @category errors
 * @since 0.2.0
 */
export class HostNotFound extends Schema.TaggedError<HostNotFound>()("HostNotFound", {
  url: Schema.String,
  host: Schema.String,
  /** `not-found`, or the resolver's reason when it failed otherwise (`Timeout`, `ServerFailure`, …). */
  reason: Schema.String
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    return this.reason === "not-found"
      ? `Cannot fetch ${this.url}: the host ${this.host} does not resolve to any address. Check the spelling of the host name, or search for the right address with web.search.`
      : `Cannot fetch ${this.url}: resolving ${this.host} failed (${this.reason}). Try again later.`
  }
}

/**
 * The connection failed: refused, reset, unreachable, or a TLS certificate
 * that does not verify.
 *
 * @category errors
 * @since 0.2.0
 */
export class FetchFailed extends Schema.TaggedError<FetchFailed>()("FetchFailed", {
  url: Schema.String,
  /** What failed, in a few words (`connection refused`, `certificate has expired`, …). */
  reason: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `Fetching ${this.url} failed: ${this.reason}. The site may be down or refusing connections; try again later or use another source.`
  }
}

/**
 * A time limit ran out: connecting (TCP and TLS) took longer than the
 * connect limit, or the whole fetch (redirects and body included) took
 * longer than the total limit.
 *
 * @category errors
 * @since 0.2.0
 */
export class FetchTimeout extends Schema.TaggedError<FetchTimeout>()("FetchTimeout", {
  url: Schema.String,
  phase: Schema.Literals(["connect", "total"]),
  millis: Schema.Int
}) {
  static readonly kind: ToolError.Kind = "timeout"
  override get message(): string {
    return this.phase === "connect"
      ? `Fetching ${this.url} timed out: no connection within ${this.millis} ms. The site may be down or unreachable; try again later or use another source.`
      : `Fetching ${this.url} timed out: the response did not complete within ${this.millis} ms. The site is slow or the page never ends; try again later or use another source.`
  }
}

/**
 * The server answered with a status that is neither a success nor a
 * redirect the tool handles (404, 500, a 3xx without `Location`, …).
 *
 * @category errors
 * @since 0.2.0
 */
export class HttpStatus extends Schema.TaggedError<HttpStatus>()("HttpStatus", {
  url: Schema.String,
  status: Schema.Int
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    const hint =
      this.status === 404 || this.status === 410
        ? "the page does not exist; check the address, or find the right one with web.search"
        : this.status === 401 || this.status === 403
          ? "the site refuses access without credentials, which web.fetch never sends"
          : this.status === 429
            ? "the site limits how often it may be fetched; wait before trying again"
            : this.status >= 500
              ? "the site failed; try again later"
              : "the tool cannot use this answer"
    return `Fetching ${this.url} answered HTTP ${this.status}: ${hint}.`
  }
}

/**
 * The response is not text: an image, a PDF, an archive, audio, video, or
 * bytes that do not decode as text. web.fetch returns text, HTML as
 * Markdown, and nothing else.
 *
 * @category errors
 * @since 0.2.0
 */
export class NotText extends Schema.TaggedError<NotText>()("NotText", {
  url: Schema.String,
  contentType: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const type = this.contentType === "" ? "no declared type, and the bytes are binary" : this.contentType
    return `${this.url} is not text (${type}): web.fetch returns HTML (as Markdown), plain text, JSON and XML only. Look for an HTML or text version of this resource.`
  }
}

/**
 * The page's HTML could not be converted to Markdown: its elements nest too
 * deeply, it needs too much memory or time, or the converter failed on it;
 * `busy` when the converters were all taken by other pages for the whole
 * time limit. The page is the problem, not the tool: this is not counted
 * against the tool's circuit breaker. Asking for the HTML itself
 * (`raw: true`) avoids the conversion.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { WebError } from "@ugent/tools"
 * const e = new WebError.NotConvertible({ url: "https://example.com/", reason: "too-deep", detail: "its elements nest too deeply" })
 * console.log(e.message)
 * // => The HTML of https://example.com/ could not be converted to Markdown: its elements nest too deeply. Fetch it again with raw: true to get the HTML as it is (page through it with startIndex), or use another source.
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class NotConvertible extends Schema.TaggedError<NotConvertible>()("NotConvertible", {
  url: Schema.String,
  reason: Schema.Literals(["too-deep", "too-large", "too-slow", "busy", "failed"]),
  /** The reason in words. */
  detail: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const next =
      this.reason === "busy"
        ? "Try again in a moment, or fetch it with raw: true to get the HTML as it is."
        : "Fetch it again with raw: true to get the HTML as it is (page through it with startIndex), or use another source."
    return `The HTML of ${this.url} could not be converted to Markdown: ${this.detail}. ${next}`
  }
}

/**
 * More same-host redirects than the limit (5 by default): a loop, or a site
 * that never settles.
 *
 * @category errors
 * @since 0.2.0
 */
export class TooManyRedirects extends Schema.TaggedError<TooManyRedirects>()("TooManyRedirects", {
  url: Schema.String,
  limit: Schema.Int
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    return `Fetching ${this.url} was redirected more than ${this.limit} times: the site redirects in a loop. Try the address the site should end on, or another source.`
  }
}

/**
 * The search provider failed: unreachable, a refused key, a status that is
 * not a success, or an answer that does not have the provider's documented
 * shape.
 *
 * @category errors
 * @since 0.2.0
 */
export class SearchFailed extends Schema.TaggedError<SearchFailed>()("SearchFailed", {
  provider: Schema.String,
  reason: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `web.search failed (${this.provider}): ${this.reason}. Try again later; if it keeps failing, the operator should check the provider's configuration.`
  }
}

/**
 * An entry of the fetch allow-list cannot be read. Entries are host names or
 * IP addresses with an optional port (`docs.internal`, `127.0.0.1:8080`,
 * `[::1]:3000`), subdomain patterns (`*.corp.example`), or CIDR ranges
 * (`10.1.0.0/16`).
 *
 * @category errors
 * @since 0.2.0
 */
export class InvalidAllowList extends Schema.TaggedError<InvalidAllowList>()("InvalidAllowList", {
  entry: Schema.String,
  reason: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `The web.fetch allow-list entry "${this.entry}" is invalid: ${this.reason}. Write a host with an optional port (docs.internal, 127.0.0.1:8080, [::1]:3000), a subdomain pattern (*.corp.example) or a CIDR range (10.1.0.0/16).`
  }
}
