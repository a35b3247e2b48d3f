/**
 * The SSRF guard of web.fetch: from a URL to the exact addresses the request
 * may connect to, or a refusal. The URL is parsed by the WHATWG parser, which
 * already turns every IPv4 spelling (decimal `2130706433`, octal `0177.0.0.1`,
 * hex `0x7f.1`, short `127.1`, a trailing dot) into a dotted quad; a literal
 * address is judged as is, a name is refused when it is `localhost` or under
 * `.localhost`, else resolved once and judged on every address it resolves
 * to. The request then connects only to those addresses (see `client.ts`),
 * so a second lookup cannot swap them (DNS rebinding).
 *
 * @internal
 */
import { ToolError } from "@ugent/core"
import { Effect } from "effect"
import { type Dns, NetAddress } from "effect/net"
import type ipaddr from "ipaddr.js"
import { AddressRefused, HostNotFound } from "../../web/WebError.ts"
import { classify, parse } from "./address.ts"
import { type AllowList, allowsAddress, allowsHost, normalizeHostname } from "./allowList.ts"

/** One address a request may connect to. */
export interface Pinned {
  readonly address: string
  readonly family: 4 | 6
}

/** A URL that passed the guard, with the addresses it may connect to. */
export interface Target {
  readonly url: URL
  /** Normalized: lower case, no brackets, no trailing dot. */
  readonly hostname: string
  readonly port: number
  readonly addresses: ReadonlyArray<Pinned>
  /** Whether the allow-list exempted this target from the address check. */
  readonly exempt: boolean
}

/** The port a URL connects to. */
export const portOf = (url: URL): number => (url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80)

/** Parses the URL a caller gave, refusing what web.fetch never requests. */
export const parseUrl = (tool: string, text: string): Effect.Effect<URL, ToolError.InvalidInput> => {
  const invalid = (issues: string) => Effect.fail(new ToolError.InvalidInput({ tool, issues }))
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    return invalid(`"${text}" is not an absolute URL; give one like https://example.com/page`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return invalid(`the scheme ${url.protocol} is not fetched; only http: and https: URLs are`)
  }
  if (url.username !== "" || url.password !== "") {
    return invalid("the URL carries a user name or password; web.fetch never sends credentials, remove them")
  }
  url.hash = ""
  return Effect.succeed(url)
}

const pin = (address: ipaddr.IPv4 | ipaddr.IPv6): Pinned => ({
  address: address.toString(),
  family: address.kind() === "ipv4" ? 4 : 6
})

/**
 * Checks a URL and resolves its host: the addresses it may connect to, or
 * why not. `redirectedFrom` names the URL whose redirect led here.
 */
export const check = (
  url: URL,
  allow: AllowList,
  dns: Dns.Dns["Service"],
  redirectedFrom?: string
): Effect.Effect<Target, AddressRefused | HostNotFound> =>
  Effect.gen(function* () {
    const hostname = normalizeHostname(url.hostname)
    const port = portOf(url)
    const hostExempt = allowsHost(allow, hostname, port)
    const refuse = (address: string | null, range: string) =>
      new AddressRefused({
        url: url.href,
        host: hostname,
        address,
        range,
        ...(redirectedFrom === undefined ? {} : { redirectedFrom })
      })
    const judge = (address: ipaddr.IPv4 | ipaddr.IPv6): { readonly exempt: boolean } | AddressRefused => {
      if (hostExempt) return { exempt: true }
      if (allowsAddress(allow, address)) return { exempt: true }
      const verdict = classify(address)
      return verdict.reachable ? { exempt: false } : refuse(address.toString(), verdict.range)
    }

    const literal = parse(hostname)
    if (literal !== undefined) {
      const verdict = judge(literal)
      if (verdict instanceof AddressRefused) return yield* verdict
      return { url, hostname, port, addresses: [pin(literal)], exempt: verdict.exempt }
    }

    if (!hostExempt && (hostname === "localhost" || hostname.endsWith(".localhost"))) {
      return yield* refuse(null, "loopback")
    }
    const resolved = yield* dns.lookup(hostname).pipe(
      Effect.mapError(
        (error) =>
          new HostNotFound({
            url: url.href,
            host: hostname,
            reason: error.reason === "NotFound" || error.reason === "BadName" ? "not-found" : error.reason
          })
      )
    )
    const addresses: Array<Pinned> = []
    let exempt = hostExempt
    for (const ip of resolved) {
      const text = NetAddress.formatIp(ip)
      const address = parse(text)
      if (address === undefined) return yield* refuse(text, "unparsable")
      const verdict = judge(address)
      if (verdict instanceof AddressRefused) return yield* verdict
      exempt ||= verdict.exempt
      addresses.push(pin(address))
    }
    return { url, hostname, port, addresses, exempt }
  })
