/**
 * threats.md 24, server-side request forgery: web.fetch must not reach
 * loopback, private, link-local, cloud metadata or other special addresses,
 * in any spelling, through DNS names that resolve there, or through
 * redirects; it connects to the address it checked, with no second lookup;
 * an allow-list exempts what it names and nothing more. A loopback server
 * started by the test records every connection, so "refused" also means
 * "nothing reached it".
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ToolError } from "@ugent/core"
import type { WebFetch } from "@ugent/tools"
import { Context, Effect, Layer, Schema } from "effect"
import { KeyValueStore } from "effect/persistence"
import { buildWeb, exitOf, failureOf, outputOf, type Site, scriptedDns, startSite } from "./fixture.ts"

const refusedRange = async (tool: Parameters<typeof failureOf>[0], url: string): Promise<string> => {
  const error = await failureOf(tool, { url })
  expect(error._tag, `${url}: ${JSON.stringify(error)}`).toBe("AddressRefused")
  expect(ToolError.kindOf(error)).toBe("denied")
  return String(error.range)
}

describe("threat 24: SSRF", () => {
  let site: Site
  let plain: Awaited<ReturnType<typeof buildWeb>>
  const fetchOf = () => plain.tools["web.fetch"]

  beforeAll(async () => {
    site = await startSite({
      "/": (_req, res) => res.end("secret"),
      "/latest/meta-data/": (_req, res) => res.end("iam credentials")
    })
    plain = await buildWeb(
      {},
      {
        hosts: {
          "internal.test": ["10.0.0.5"],
          "metadata.test": ["169.254.169.254"],
          "loopback.test": ["127.0.0.1"],
          "v6-loopback.test": ["::1"],
          "mapped.test": ["::ffff:127.0.0.1"],
          "nat64.test": ["64:ff9b::a00:5"],
          "cgnat.test": ["100.64.0.9"],
          "mixed.test": ["93.184.216.34", "127.0.0.1"],
          "ula.test": ["fd00::5"]
        }
      }
    )
  })
  afterAll(async () => {
    await plain.close()
    await site.close()
  })

  describe("threat 24: every spelling of a loopback address is refused, and nothing reaches the server", () => {
    const port = () => site.port
    const spellings = (): ReadonlyArray<string> => [
      `http://127.0.0.1:${port()}/`,
      `http://2130706433:${port()}/`,
      `http://0x7f000001:${port()}/`,
      `http://017700000001:${port()}/`,
      `http://0177.0.0.1:${port()}/`,
      `http://0x7f.1:${port()}/`,
      `http://127.1:${port()}/`,
      `http://127.0.1:${port()}/`,
      `http://127.000.000.001:${port()}/`,
      `http://127.0.0.1.:${port()}/`,
      `http://127.255.255.254:${port()}/`,
      `http://[::1]:${port()}/`,
      `http://[0:0:0:0:0:0:0:1]:${port()}/`,
      `http://[::ffff:127.0.0.1]:${port()}/`,
      `http://[::ffff:7f00:1]:${port()}/`,
      `http://[0:0:0:0:0:ffff:127.0.0.1]:${port()}/`,
      `http://[::ffff:0:127.0.0.1]:${port()}/`,
      `http://[::127.0.0.1]:${port()}/`,
      `http://[::7f00:1]:${port()}/`,
      `http://[64:ff9b::127.0.0.1]:${port()}/`,
      `http://[2002:7f00:1::]:${port()}/`,
      `http://localhost:${port()}/`,
      `http://LOCALHOST:${port()}/`,
      `http://localhost.:${port()}/`,
      `http://app.localhost:${port()}/`,
      `http://loopback.test:${port()}/`,
      `http://v6-loopback.test:${port()}/`,
      `http://mapped.test:${port()}/`,
      `http://0:${port()}/`,
      `http://0.0.0.0:${port()}/`,
      `http://[::]:${port()}/`,
      `https://127.0.0.1:${port()}/`
    ]

    it("threat 24: loopback in decimal, octal, hex, short, padded, trailing-dot, IPv6, IPv4-mapped, IPv4-compatible, NAT64, 6to4, localhost and DNS forms", async () => {
      const before = site.connections()
      for (const url of spellings()) {
        const range = await refusedRange(fetchOf(), url)
        expect(["loopback", "unspecified", "ipv4-compatible"], url).toContain(range)
      }
      expect(site.connections() - before).toBe(0)
      expect(site.requests).toEqual([])
    })
  })

  it.each([
    ["private 10/8", "http://10.0.0.1/", "private"],
    ["private 172.16/12", "http://172.16.0.1/", "private"],
    ["private 172.31.255.255", "http://172.31.255.255/", "private"],
    ["private 192.168/16", "http://192.168.1.1/", "private"],
    ["private, decimal", "http://3232235777/", "private"],
    ["private, hex", "http://0xc0.0xa8.1.1/", "private"],
    ["carrier-grade NAT 100.64/10", "http://100.64.0.1/", "carrier-grade-nat"],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/", "link-local"],
    ["cloud metadata, decimal", "http://2852039166/latest/meta-data/", "link-local"],
    ["cloud metadata, IPv4-mapped", "http://[::ffff:169.254.169.254]/", "link-local"],
    ["cloud metadata, 6to4", "http://[2002:a9fe:a9fe::]/", "link-local"],
    ["link-local IPv6", "http://[fe80::1]/", "link-local"],
    ["unique local fc00::/7", "http://[fc00::1]/", "unique-local"],
    ["unique local fd00::/8", "http://[fd12:3456::1]/", "unique-local"],
    ["site-local fec0::/10", "http://[fec0::1]/", "site-local"],
    ["multicast IPv4", "http://224.0.0.1/", "multicast"],
    ["multicast IPv6", "http://[ff02::1]/", "multicast"],
    ["broadcast", "http://255.255.255.255/", "broadcast"],
    ["unspecified, this network 0/8", "http://0.1.2.3/", "unspecified"],
    ["documentation 192.0.2/24", "http://192.0.2.10/", "reserved"],
    ["documentation 198.51.100/24", "http://198.51.100.10/", "reserved"],
    ["documentation 203.0.113/24", "http://203.0.113.10/", "reserved"],
    ["documentation 2001:db8::/32", "http://[2001:db8::1]/", "reserved"],
    ["reserved 240/4", "http://240.0.0.1/", "reserved"],
    ["IETF protocol assignments 192.0.0/24", "http://192.0.0.8/", "reserved"],
    ["benchmarking 198.18/15", "http://198.19.0.1/", "reserved"],
    ["NAT64 of a private address", "http://[64:ff9b::10.0.0.1]/", "private"],
    ["local-use NAT64", "http://[64:ff9b:1::a00:1]/", "nat64-local"],
    ["6to4 of a private address", "http://[2002:c0a8:101::1]/", "private"],
    ["IPv4-translated of a private address", "http://[::ffff:0:10.0.0.1]/", "private"],
    ["Teredo", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "teredo"],
    ["outside global unicast", "http://[4000::1]/", "reserved"]
  ] as const)("threat 24: %s is refused (%s)", async (_name, url, range) => {
    expect(await refusedRange(fetchOf(), url)).toBe(range)
  })

  it.each([
    ["a private address", "internal.test", "private"],
    ["the cloud metadata address", "metadata.test", "link-local"],
    ["an IPv4-mapped loopback address", "mapped.test", "loopback"],
    ["a NAT64 form of a private address", "nat64.test", "private"],
    ["a carrier-grade NAT address", "cgnat.test", "carrier-grade-nat"],
    ["a unique local IPv6 address", "ula.test", "unique-local"],
    ["one private address among public ones", "mixed.test", "loopback"]
  ] as const)("threat 24: a DNS name resolving to %s is refused after resolution", async (_what, host, range) => {
    const error = await failureOf(fetchOf(), { url: `http://${host}/` })
    expect([error._tag, error.host, error.range]).toEqual(["AddressRefused", host, range])
    expect(String(error.message)).toContain(`${host} resolves to`)
  })

  it("threat 24: the connection goes to the address that was checked, with exactly one lookup (no second lookup to rebind)", async () => {
    // First answer public, every later one loopback: a second lookup at connect time would reach the server.
    const { dns, counter } = scriptedDns((_host, n) => (n === 1 ? ["192.88.98.1"] : ["127.0.0.1"]))
    const web = await buildWeb({ limits: { connectTimeout: "300 millis", timeout: "1 second" } }, { dns })
    try {
      const before = site.connections()
      const error = await failureOf(web.tools["web.fetch"], { url: `http://rebind.test:${site.port}/` })
      // The checked public address is unreachable here: a connection failure or time limit, never the loopback server.
      expect(["FetchFailed", "FetchTimeout"]).toContain(error._tag)
      expect(counter.lookups).toBe(1)
      expect(site.connections() - before).toBe(0)
    } finally {
      await web.close()
    }
  })

  it("threat 24: a name the system resolver does not know is reached at the address the tool resolved (the lookup is pinned)", async () => {
    const { dns, counter } = scriptedDns(() => ["127.0.0.1"])
    const web = await buildWeb({ allowHosts: [`pinned.test:${site.port}`] }, { dns })
    try {
      const out = await outputOf<WebFetch.Output>(web.tools["web.fetch"], { url: `http://pinned.test:${site.port}/` })
      expect(out.content).toBe("secret")
      expect(site.requests.at(-1)?.headers.host).toBe(`pinned.test:${site.port}`)
      expect(counter.lookups).toBe(1)
    } finally {
      await web.close()
    }
  })

  describe("threat 24: redirects are checked again", () => {
    let allowed: Site
    let web: Awaited<ReturnType<typeof buildWeb>>
    beforeAll(async () => {
      allowed = await startSite({
        "/to-other-port": (_req, res) => {
          res.writeHead(302, { location: `http://127.0.0.1:${site.port}/` })
          res.end()
        },
        "/to-metadata": (_req, res) => {
          res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" })
          res.end()
        },
        "/to-localhost": (_req, res) => {
          res.writeHead(302, { location: `http://localhost:${site.port}/` })
          res.end()
        },
        "/to-private-name": (_req, res) => {
          res.writeHead(302, { location: "http://internal.test/" })
          res.end()
        },
        "/rebinding": (_req, res) => {
          res.writeHead(302, { location: "/landing" })
          res.end()
        }
      })
      web = await buildWeb(
        { allowHosts: [`127.0.0.1:${allowed.port}`, `allowed.test:${allowed.port}`] },
        { hosts: { "internal.test": ["10.0.0.5"], "allowed.test": ["127.0.0.1"] } }
      )
    })
    afterAll(async () => {
      await web.close()
      await allowed.close()
    })

    it("threat 24: a same-host redirect from an allowed host:port to a port the list does not name is refused, and never reaches it", async () => {
      const before = site.connections()
      const error = await failureOf(web.tools["web.fetch"], { url: `${allowed.origin}/to-other-port` })
      expect([error._tag, error.range, error.redirectedFrom]).toEqual([
        "AddressRefused",
        "loopback",
        `${allowed.origin}/to-other-port`
      ])
      expect(site.connections() - before).toBe(0)
    })

    it("threat 24: a redirect from an allowed host to cloud metadata, localhost or a privately resolving name is reported, never followed; fetching it is refused", async () => {
      const before = site.connections()
      for (const [path, target] of [
        ["/to-metadata", "http://169.254.169.254/latest/meta-data/"],
        ["/to-localhost", `http://localhost:${site.port}/`],
        ["/to-private-name", "http://internal.test/"]
      ] as const) {
        const out = await outputOf<WebFetch.Output>(web.tools["web.fetch"], { url: `${allowed.origin}${path}` })
        expect(out.redirect?.location).toBe(target)
        await refusedRange(web.tools["web.fetch"], target)
      }
      expect(site.connections() - before).toBe(0)
    })

    it("threat 24: a same-host redirect resolves the name again and checks the new answer", async () => {
      const { dns, counter } = scriptedDns((_host, n) => (n === 1 ? ["127.0.0.1"] : ["10.0.0.7"]))
      const rebinding = await buildWeb({ allowHosts: [`127.0.0.0/8`] }, { dns })
      try {
        const error = await failureOf(rebinding.tools["web.fetch"], {
          url: `http://flip.test:${allowed.port}/rebinding`
        })
        expect([error._tag, error.address, error.range]).toEqual(["AddressRefused", "10.0.0.7", "private"])
        expect(counter.lookups).toBe(2)
      } finally {
        await rebinding.close()
      }
    })
  })

  describe("threat 24: the allow-list exempts what it names and nothing more", () => {
    it("threat 24: 127.0.0.1:<port> does not open another port, localhost, [::1] or another loopback address", async () => {
      const web = await buildWeb({ allowHosts: [`127.0.0.1:${site.port}`] })
      try {
        expect((await outputOf<WebFetch.Output>(web.tools["web.fetch"], { url: `${site.origin}/` })).content).toBe(
          "secret"
        )
        // WHATWG spellings of the same address are the same host.
        expect(
          (await outputOf<WebFetch.Output>(web.tools["web.fetch"], { url: `http://2130706433:${site.port}/` })).content
        ).toBe("secret")
        const before = site.connections()
        for (const url of [
          `http://127.0.0.1:${site.port + 1}/`,
          `http://127.0.0.1/`,
          `http://localhost:${site.port}/`,
          `http://[::1]:${site.port}/`,
          `http://127.0.0.2:${site.port}/`,
          "http://169.254.169.254/"
        ]) {
          await refusedRange(web.tools["web.fetch"], url)
        }
        expect(site.connections() - before).toBe(0)
      } finally {
        await web.close()
      }
    })

    it("threat 24: a CIDR entry exempts addresses inside it only; a subdomain pattern exempts subdomains only", async () => {
      const web = await buildWeb(
        { allowHosts: ["127.0.0.0/30", "*.corp.test"] },
        {
          hosts: {
            "in.test": ["127.0.0.1"],
            "out.test": ["127.0.0.9"],
            "a.corp.test": ["127.0.0.9"],
            "corp.test": ["127.0.0.9"]
          }
        }
      )
      try {
        for (const url of ["http://in.test", `http://127.0.0.2`, "http://a.corp.test"]) {
          // Exempt: the guard lets them through (the server answers, or nothing listens on that address).
          const exit = await exitOf(web.tools["web.fetch"], { url: `${url}:${site.port}/` })
          const error = exit._tag === "Failure" ? exit.cause.reasons[0] : undefined
          expect(error?._tag === "Fail" ? (error.error as { _tag: string })._tag : "passed", url).not.toBe(
            "AddressRefused"
          )
        }
        for (const url of ["http://out.test", "http://corp.test", "http://127.0.0.9", "http://localhost"]) {
          await refusedRange(web.tools["web.fetch"], `${url}:${site.port}/`)
        }
      } finally {
        await web.close()
      }
    })

    it("threat 24: a page cached through an allow-list is not served to a tool without it (the check comes before the cache)", async () => {
      const store = await Effect.runPromise(
        Effect.scoped(
          Effect.map(Layer.build(KeyValueStore.layerMemory), (ctx) => Context.get(ctx, KeyValueStore.KeyValueStore))
        )
      )
      const privileged = await buildWeb({ allowHosts: [`127.0.0.1:${site.port}`] }, { store })
      const ordinary = await buildWeb({}, { store })
      try {
        expect(
          (await outputOf<WebFetch.Output>(privileged.tools["web.fetch"], { url: `${site.origin}/` })).content
        ).toBe("secret")
        expect(await refusedRange(ordinary.tools["web.fetch"], `${site.origin}/`)).toBe("loopback")
      } finally {
        await privileged.close()
        await ordinary.close()
      }
    })

    it("threat 24: a page cached through an allow-list is not served when the same URL later passes the check as public", async () => {
      const store = await Effect.runPromise(
        Effect.scoped(
          Effect.map(Layer.build(KeyValueStore.layerMemory), (ctx) => Context.get(ctx, KeyValueStore.KeyValueStore))
        )
      )
      // The name first resolves to the allowed loopback server, then (for the other tool) to a public address.
      const inside = scriptedDns(() => ["127.0.0.1"])
      const outside = scriptedDns(() => ["192.88.98.1"])
      const privileged = await buildWeb({ allowHosts: ["127.0.0.0/8"] }, { store, dns: inside.dns })
      const ordinary = await buildWeb(
        { limits: { connectTimeout: "300 millis", timeout: "1 second" } },
        { store, dns: outside.dns }
      )
      try {
        const url = `http://moving.test:${site.port}/`
        expect((await outputOf<WebFetch.Output>(privileged.tools["web.fetch"], { url })).content).toBe("secret")
        const error = await failureOf(ordinary.tools["web.fetch"], { url })
        expect(["FetchFailed", "FetchTimeout"]).toContain(error._tag)
      } finally {
        await privileged.close()
        await ordinary.close()
      }
    })

    it.each([
      ["*", "names no host"],
      ["", "empty"],
      ["0.0.0.0/0", "/0"],
      ["::/0", "/0"],
      ["10.0.0.0/33", "not a CIDR"],
      ["host.test:0", "port"],
      ["host.test:99999", "port"],
      ["a*b.test", "not a host"],
      ["*.10.0.0.1", "pattern"]
    ])("threat 24: the allow-list entry %j fails the family's build", async (entry, why) => {
      const exit = await Effect.runPromiseExit(
        Effect.scoped(
          Effect.gen(function* () {
            const { Web } = yield* Effect.promise(() => import("@ugent/tools"))
            return yield* Web.family({ allowHosts: [entry] }).build
          })
        ).pipe(Effect.provide(KeyValueStore.layerMemory))
      )
      expect(exit._tag).toBe("Failure")
      const error = exit._tag === "Failure" ? exit.cause.reasons[0] : undefined
      expect(error?._tag === "Fail" ? (error.error as { _tag: string })._tag : undefined).toBe("InvalidAllowList")
      expect(String(error?._tag === "Fail" ? (error.error as Error).message : "")).toContain(why)
    })
  })

  it.effect.prop(
    "threat 24: any private IPv4 address, in decimal, hex or octal, is refused before any connection",
    {
      offset: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 0xffffff })),
      base: Schema.Literals([0x0a000000, 0xac100000, 0xc0a80000, 0x7f000000, 0xa9fe0000, 0x64400000]),
      spelling: Schema.Literals(["decimal", "hex", "octal", "dotted-octal"])
    },
    ({ offset, base, spelling }) =>
      Effect.gen(function* () {
        const masks: Record<number, number> = {
          0x0a000000: 0xffffff,
          0xac100000: 0x0fffff,
          0xc0a80000: 0x00ffff,
          0x7f000000: 0xffffff,
          0xa9fe0000: 0x00ffff,
          0x64400000: 0x3fffff
        }
        const n = (base + (offset & (masks[base] ?? 0))) >>> 0
        const octets = [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]
        const host =
          spelling === "decimal"
            ? String(n)
            : spelling === "hex"
              ? `0x${n.toString(16)}`
              : spelling === "octal"
                ? `0${n.toString(8)}`
                : octets.map((o) => `0${o.toString(8)}`).join(".")
        const error = yield* Effect.promise(() => failureOf(fetchOf(), { url: `http://${host}:${site.port}/` }))
        expect(error._tag).toBe("AddressRefused")
      }),
    { arbitrary: { runs: 200 } }
  )
})
