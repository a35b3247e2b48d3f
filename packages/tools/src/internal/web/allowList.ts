/**
 * The operator's allow-list for web.fetch: destinations exempt from the
 * address check. An entry is a host (name or IP address, normalized the way
 * URLs are, so `127.1` and `127.0.0.1` are one host) with an optional port,
 * a subdomain pattern `*.corp.example` (subdomains, not the apex), or a CIDR
 * range (`10.1.0.0/16`, `fd00::/8`) that exempts any resolved address inside
 * it. A host entry without a port allows every port of that host.
 *
 * An entry exempts exactly what it names: a redirect is judged again on its
 * own target, so an allowed `127.0.0.1:8080` that redirects to
 * `127.0.0.1:8081` is refused.
 *
 * @internal
 */
import { createHash } from "node:crypto"
import ipaddr from "ipaddr.js"
import { InvalidAllowList } from "../../web/WebError.ts"
import { parse, unmapped } from "./address.ts"

type Entry =
  | { readonly _tag: "Host"; readonly host: string; readonly port: number | undefined }
  | { readonly _tag: "Subdomains"; readonly suffix: string; readonly port: number | undefined }
  | { readonly _tag: "Cidr"; readonly range: [ipaddr.IPv4 | ipaddr.IPv6, number] }

/** A compiled allow-list. */
export interface AllowList {
  readonly entries: ReadonlyArray<Entry>
  /** A digest of the normalized entries: cache entries fetched through the list are keyed by it. */
  readonly fingerprint: string
}

/** Lower-cased, trailing dots removed, brackets of an IPv6 literal removed. */
export const normalizeHostname = (hostname: string): string => {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname
  return bare.toLowerCase().replace(/\.+$/, "")
}

const hostOf = (text: string): string | undefined => {
  try {
    return normalizeHostname(new URL(`http://${text}/`).hostname)
  } catch {
    return undefined
  }
}

const splitPort = (entry: string): { readonly host: string; readonly port: string | undefined } => {
  if (entry.startsWith("[")) {
    const close = entry.indexOf("]")
    const rest = entry.slice(close + 1)
    return {
      host: entry.slice(0, close + 1),
      port: rest.startsWith(":") ? rest.slice(1) : rest === "" ? undefined : rest
    }
  }
  const colons = entry.split(":").length - 1
  if (colons === 1) {
    const at = entry.indexOf(":")
    return { host: entry.slice(0, at), port: entry.slice(at + 1) }
  }
  // A bare IPv6 address has several colons and no port.
  return { host: colons > 1 ? `[${entry}]` : entry, port: undefined }
}

const compileEntry = (raw: string): Entry | InvalidAllowList => {
  const entry = raw.trim()
  const invalid = (reason: string) => new InvalidAllowList({ entry: raw, reason })
  if (entry === "") return invalid("it is empty")
  if (entry.includes("/")) {
    if (!ipaddr.isValidCIDR(entry)) return invalid("it has a / but is not a CIDR range")
    const [address, bits] = ipaddr.parseCIDR(entry)
    if (bits === 0) return invalid("a /0 range would switch the address check off; name a narrower range")
    const plain = unmapped(address)
    // An IPv4-mapped range (::ffff:10.0.0.0/104) is the IPv4 range it maps.
    return plain.kind() !== address.kind() && bits >= 96
      ? { _tag: "Cidr", range: [plain, bits - 96] }
      : { _tag: "Cidr", range: [address, bits] }
  }
  const { host, port: portText } = splitPort(entry)
  let port: number | undefined
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      return invalid(`the port "${portText}" is not a number from 1 to 65535`)
    }
    port = Number(portText)
  }
  if (host === "*" || host === "") return invalid("it names no host; allowing every host would switch the check off")
  if (host.startsWith("*.")) {
    const suffix = hostOf(host.slice(2))
    if (suffix === undefined || suffix.includes("*") || parse(suffix) !== undefined) {
      return invalid("a pattern is *. followed by a domain name")
    }
    return { _tag: "Subdomains", suffix, port }
  }
  const normalized = hostOf(host)
  if (normalized === undefined || normalized.includes("*")) return invalid("it is not a host name or an IP address")
  return { _tag: "Host", host: normalized, port }
}

/** Compiles the entries, or returns the first that cannot be read. */
export const compile = (entries: ReadonlyArray<string>): AllowList | InvalidAllowList => {
  const compiled: Array<Entry> = []
  for (const raw of entries) {
    const entry = compileEntry(raw)
    if (entry instanceof InvalidAllowList) return entry
    compiled.push(entry)
  }
  const canonical = compiled
    .map((e) =>
      e._tag === "Cidr"
        ? `cidr ${e.range[0].toString()}/${e.range[1]}`
        : `${e._tag === "Host" ? "host" : "sub"} ${e._tag === "Host" ? e.host : e.suffix}:${e.port ?? "*"}`
    )
    .sort()
  return {
    entries: compiled,
    fingerprint: createHash("sha256").update(canonical.join("\n")).digest("hex").slice(0, 16)
  }
}

/** The empty list: nothing exempt. */
export const empty: AllowList = { entries: [], fingerprint: "none" }

/** Whether a host entry exempts this hostname (normalized) and port. */
export const allowsHost = (self: AllowList, hostname: string, port: number): boolean =>
  self.entries.some((e) =>
    e._tag === "Host"
      ? e.host === hostname && (e.port === undefined || e.port === port)
      : e._tag === "Subdomains"
        ? hostname.endsWith(`.${e.suffix}`) && (e.port === undefined || e.port === port)
        : false
  )

/** Whether a CIDR entry exempts this address. */
export const allowsAddress = (self: AllowList, address: ipaddr.IPv4 | ipaddr.IPv6): boolean => {
  const plain = unmapped(address)
  return self.entries.some((e) => e._tag === "Cidr" && e.range[0].kind() === plain.kind() && plain.match(e.range))
}
