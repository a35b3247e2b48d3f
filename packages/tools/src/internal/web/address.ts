/**
 * Which IP addresses web.fetch may connect to. ipaddr.js parses addresses and
 * knows the IANA special-purpose ranges; this module decides. An IPv4
 * address is reachable only when it is ordinary unicast (not loopback,
 * private, link-local, carrier-grade NAT, multicast, unspecified, broadcast,
 * reserved, documentation, benchmarking or another special range). An IPv6
 * address is reachable only inside the global unicast range 2000::/3 and
 * outside every special range; the forms that carry an IPv4 address
 * (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) are judged by the IPv4 address they carry, and Teredo
 * and local-use NAT64 are refused outright.
 *
 * @internal
 */
import ipaddr from "ipaddr.js"

/** Whether an address may be reached, and if not, the name of its range. */
export type Verdict = { readonly reachable: true } | { readonly reachable: false; readonly range: string }

const reachable: Verdict = { reachable: true }
const refused = (range: string): Verdict => ({ reachable: false, range })

const rangeNames: Record<string, string> = {
  linkLocal: "link-local",
  carrierGradeNat: "carrier-grade-nat",
  uniqueLocal: "unique-local",
  deprecatedSiteLocal: "site-local",
  benchmarking: "benchmarking",
  loopback: "loopback",
  private: "private",
  multicast: "multicast",
  unspecified: "unspecified",
  broadcast: "broadcast",
  reserved: "reserved"
}

const rangeName = (range: string): string => rangeNames[range] ?? "special-purpose"

const globalUnicast = ipaddr.parseCIDR("2000::/3")
const nat64 = ipaddr.parseCIDR("64:ff9b::/96")

const ipv4Of = (high: number, low: number): ipaddr.IPv4 =>
  new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])

const classifyV4 = (address: ipaddr.IPv4): Verdict => {
  const range = address.range()
  return range === "unicast" ? reachable : refused(rangeName(range))
}

const classifyV6 = (address: ipaddr.IPv6): Verdict => {
  const parts = address.parts
  const range = address.range()
  switch (range) {
    case "ipv4Mapped":
    case "rfc6145":
      return classifyV4(ipv4Of(parts[6] ?? 0, parts[7] ?? 0))
    case "rfc6052":
      return address.match(nat64) ? classifyV4(ipv4Of(parts[6] ?? 0, parts[7] ?? 0)) : refused("nat64-local")
    case "6to4":
      return classifyV4(ipv4Of(parts[1] ?? 0, parts[2] ?? 0))
    case "teredo":
      return refused("teredo")
    case "unicast":
      // ipaddr.js calls everything outside its special list unicast, IPv4-compatible ::a.b.c.d included;
      // only 2000::/3 is allocated for global unicast.
      return address.match(globalUnicast)
        ? reachable
        : refused(parts.slice(0, 6).every((p) => p === 0) ? "ipv4-compatible" : "reserved")
    default:
      return refused(rangeName(range))
  }
}

/** Parses an IP address in canonical text (dotted quad, or IPv6 without brackets), or `undefined`. */
export const parse = (text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined => {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text)
  if (ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text)
  return undefined
}

/** Whether web.fetch may connect to an address. */
export const classify = (address: ipaddr.IPv4 | ipaddr.IPv6): Verdict =>
  address.kind() === "ipv4" ? classifyV4(address as ipaddr.IPv4) : classifyV6(address as ipaddr.IPv6)

/** The IPv4 address an IPv4-mapped IPv6 address stands for, else the address itself (for CIDR matching). */
export const unmapped = (address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 =>
  address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address
