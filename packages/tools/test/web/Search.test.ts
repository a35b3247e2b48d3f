/**
 * web.search over its two providers, each against a loopback fake that
 * replays the provider's documented JSON answer; the provider chosen from the
 * environment; the cache; the tool left out when nothing is configured.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "@effect/vitest"
import { type Family, ToolError } from "@ugent/core"
import { Web, type WebSearch } from "@ugent/tools"
import type { KeyValueStore } from "effect/persistence"
import { buildWeb, failureOf, outputOf, type Site, startSite } from "./fixture.ts"

const searxngAnswer = (query: string) => ({
  query,
  number_of_results: 0,
  results: [
    {
      url: "https://effect.website/",
      title: "Effect &ndash; the best way to build robust apps in TypeScript",
      content: "Effect is a powerful TypeScript library designed to help developers create complex programs.",
      publishedDate: null,
      thumbnail: "",
      engine: "duckduckgo",
      template: "default.html",
      parsed_url: ["https", "effect.website", "/", "", "", ""],
      img_src: "",
      priority: "",
      engines: ["duckduckgo", "brave"],
      positions: [1, 2],
      score: 4,
      category: "general"
    },
    {
      url: "https://github.com/Effect-TS/effect",
      title: "Effect-TS/effect",
      content: null,
      engine: "brave",
      parsed_url: ["https", "github.com", "/Effect-TS/effect", "", "", ""],
      template: "default.html",
      engines: ["brave"],
      positions: [2],
      score: 0.5,
      category: "general"
    },
    {
      url: "https://www.npmjs.com/package/effect",
      title: "effect - npm",
      content: "The missing standard library for TypeScript.",
      engine: "duckduckgo",
      engines: ["duckduckgo"],
      positions: [3],
      score: 0.33,
      category: "general"
    }
  ],
  answers: [],
  corrections: [],
  infoboxes: [],
  suggestions: ["effect ts tutorial"],
  unresponsive_engines: []
})

const braveAnswer = (query: string) => ({
  type: "search",
  query: { original: query, show_strict_warning: false, is_navigational: false, spellcheck_off: true, country: "us" },
  mixed: { type: "mixed", main: [{ type: "web", index: 0, all: false }], top: [], side: [] },
  web: {
    type: "search",
    results: [
      {
        title: "Effect – The best way to build robust apps in TypeScript",
        url: "https://effect.website/",
        is_source_local: false,
        is_source_both: false,
        description:
          "<strong>Effect</strong> is a powerful <strong>TypeScript</strong> library &amp; ecosystem &#x27;for&#x27; you.",
        page_age: "2024-05-01T00:00:00",
        profile: {
          name: "Effect",
          url: "https://effect.website/",
          long_name: "effect.website",
          img: "https://imgs.example/x"
        },
        language: "en",
        family_friendly: true,
        type: "search_result",
        subtype: "generic",
        meta_url: { scheme: "https", netloc: "effect.website", hostname: "effect.website", favicon: "", path: "" },
        age: "May 1, 2024"
      },
      { title: "Effect docs", url: "https://effect.website/docs", type: "search_result" }
    ],
    family_friendly: true
  }
})

const json = (res: import("node:http").ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

describe("web.search", () => {
  let searxng: Site
  let brave: Site
  beforeAll(async () => {
    searxng = await startSite({
      "/searx/search": (req, res) => {
        const url = new URL(req.url ?? "/", "http://x")
        if (url.searchParams.get("format") !== "json") return json(res, 403, { error: "format not allowed" })
        if (url.searchParams.get("q") === "malformed") return json(res, 200, { results: [{ title: 3 }] })
        if (url.searchParams.get("q") === "nothing") return json(res, 200, { ...searxngAnswer("nothing"), results: [] })
        json(res, 200, searxngAnswer(url.searchParams.get("q") ?? ""))
      }
    })
    brave = await startSite({
      "/res/v1/web/search": (req, res) => {
        if (req.headers["x-subscription-token"] !== "brave-key") {
          return json(res, 401, { type: "ErrorResponse", error: { status: 401, code: "SUBSCRIPTION_TOKEN_INVALID" } })
        }
        const url = new URL(req.url ?? "/", "http://x")
        json(res, 200, braveAnswer(url.searchParams.get("q") ?? ""))
      }
    })
  })
  afterAll(async () => {
    await searxng.close()
    await brave.close()
  })

  describe("SearXNG (UGENT_SEARXNG_URL)", () => {
    it("asks /search with format=json and returns { title, url, snippet }, cut to limit", async () => {
      const web = await buildWeb({}, { env: { UGENT_SEARXNG_URL: `${searxng.origin}/searx` } })
      try {
        const out = await outputOf<WebSearch.Output>(web.tools["web.search"], { query: "  effect   ts ", limit: 2 })
        expect(out.provider).toBe("searxng")
        expect(out.query).toBe("effect ts")
        expect(out.results).toEqual([
          {
            title: "Effect &ndash; the best way to build robust apps in TypeScript",
            url: "https://effect.website/",
            snippet: "Effect is a powerful TypeScript library designed to help developers create complex programs."
          },
          { title: "Effect-TS/effect", url: "https://github.com/Effect-TS/effect", snippet: "" }
        ])
        const request = new URL(searxng.requests.at(-1)?.url ?? "", "http://x")
        expect(request.pathname).toBe("/searx/search")
        expect(Object.fromEntries(request.searchParams)).toEqual({ q: "effect ts", format: "json", pageno: "1" })
      } finally {
        await web.close()
      }
    })

    it("the same query within 15 minutes is answered from the cache", async () => {
      const web = await buildWeb({}, { env: { UGENT_SEARXNG_URL: searxng.origin.replace(/$/, "/searx/") } })
      try {
        const before = searxng.requests.length
        await outputOf(web.tools["web.search"], { query: "cached query" })
        await outputOf(web.tools["web.search"], { query: "cached   query" })
        expect(searxng.requests.length - before).toBe(1)
        await outputOf(web.tools["web.search"], { query: "cached query", limit: 1 })
        expect(searxng.requests.length - before).toBe(2)
      } finally {
        await web.close()
      }
    })

    it("no results come with a notice; a malformed answer or a refusal is SearchFailed (unavailable)", async () => {
      const web = await buildWeb({}, { env: { UGENT_SEARXNG_URL: `${searxng.origin}/searx` } })
      const wrongPath = await buildWeb({}, { env: { UGENT_SEARXNG_URL: `${searxng.origin}/elsewhere` } })
      try {
        const none = await outputOf<WebSearch.Output>(web.tools["web.search"], { query: "nothing" })
        expect([none.results, none.notice]).toEqual([[], "No results. Try other or fewer words."])
        const malformed = await failureOf(web.tools["web.search"], { query: "malformed" })
        expect([malformed._tag, malformed.reason]).toEqual([
          "SearchFailed",
          "the answer does not have the provider's documented shape"
        ])
        expect(ToolError.kindOf(malformed)).toBe("unavailable")
        const missing = await failureOf(wrongPath.tools["web.search"], { query: "x" })
        expect(missing.reason).toBe("the provider answered HTTP 404")
      } finally {
        await web.close()
        await wrongPath.close()
      }
    })

    it("the configured provider origin is exempt from the address check for the provider only: web.fetch still refuses it", async () => {
      const web = await buildWeb({}, { env: { UGENT_SEARXNG_URL: `${searxng.origin}/searx` } })
      try {
        await outputOf(web.tools["web.search"], { query: "exempt" })
        const before = searxng.connections()
        const error = await failureOf(web.tools["web.fetch"], { url: `${searxng.origin}/searx/search?q=x&format=json` })
        expect(error._tag).toBe("AddressRefused")
        expect(searxng.connections() - before).toBe(0)
      } finally {
        await web.close()
      }
    })
  })

  describe("Brave Search (BRAVE_SEARCH_API_KEY)", () => {
    it("sends the key in X-Subscription-Token with count, and strips the description's marks and entities", async () => {
      const web = await buildWeb(
        {},
        { env: { BRAVE_SEARCH_API_KEY: "brave-key", UGENT_BRAVE_SEARCH_URL: brave.origin } }
      )
      try {
        const out = await outputOf<WebSearch.Output>(web.tools["web.search"], { query: "effect ts", limit: 5 })
        expect(out.provider).toBe("brave")
        expect(out.results).toEqual([
          {
            title: "Effect – The best way to build robust apps in TypeScript",
            url: "https://effect.website/",
            snippet: "Effect is a powerful TypeScript library & ecosystem 'for' you."
          },
          { title: "Effect docs", url: "https://effect.website/docs", snippet: "" }
        ])
        const request = brave.requests.at(-1)
        expect(request?.headers["x-subscription-token"]).toBe("brave-key")
        expect(request?.headers.accept).toBe("application/json")
        expect(Object.fromEntries(new URL(request?.url ?? "", "http://x").searchParams)).toEqual({
          q: "effect ts",
          count: "5"
        })
      } finally {
        await web.close()
      }
    })

    it("a refused key is SearchFailed with what to check", async () => {
      const web = await buildWeb({}, { env: { BRAVE_SEARCH_API_KEY: "wrong", UGENT_BRAVE_SEARCH_URL: brave.origin } })
      try {
        const error = await failureOf(web.tools["web.search"], { query: "x" })
        expect(error._tag).toBe("SearchFailed")
        expect(String(error.message)).toContain("check BRAVE_SEARCH_API_KEY")
      } finally {
        await web.close()
      }
    })
  })

  describe("the web family", () => {
    it("offers web.search only when a provider is configured; SearXNG wins when both are", async () => {
      const none = await buildWeb({}, { env: {} })
      const empty = await buildWeb({}, { env: { UGENT_SEARXNG_URL: "", BRAVE_SEARCH_API_KEY: "" } })
      const both = await buildWeb(
        {},
        {
          env: {
            UGENT_SEARXNG_URL: `${searxng.origin}/searx`,
            BRAVE_SEARCH_API_KEY: "brave-key",
            UGENT_BRAVE_SEARCH_URL: brave.origin
          }
        }
      )
      try {
        expect(Object.keys(none.tools)).toEqual(["web.fetch"])
        expect(Object.keys(empty.tools)).toEqual(["web.fetch"])
        expect(Object.keys(both.tools)).toEqual(["web.fetch", "web.search"])
        expect((await outputOf<WebSearch.Output>(both.tools["web.search"], { query: "who wins" })).provider).toBe(
          "searxng"
        )
      } finally {
        await none.close()
        await empty.close()
        await both.close()
      }
    })

    it("a large result is told in a sentence, with how to get less", async () => {
      const web = await buildWeb({}, { env: { UGENT_SEARXNG_URL: `${searxng.origin}/searx` } })
      try {
        const input = { query: "told" }
        const out = await outputOf<WebSearch.Output>(web.tools["web.search"], input)
        expect(web.members["web.search"]?.present?.(out, input)).toEqual({
          summary: 'Found 3 results for "told" (searxng)',
          next: "search again with a smaller limit"
        })
        const page = {
          url: "https://example.com/a",
          finalUrl: "https://example.com/b",
          status: 200,
          contentType: "text/html",
          contentLength: null,
          title: "B",
          content: "x".repeat(10),
          startIndex: 20,
          nextIndex: 30,
          totalLength: 100,
          truncated: true,
          bodyTruncated: false,
          fetchedAt: "2026-01-01T00:00:00.000Z"
        }
        expect(web.members["web.fetch"]?.present?.(page, { url: page.url })?.summary).toBe(
          'Fetched "B" (https://example.com/b): characters 20-30 of 100'
        )
      } finally {
        await web.close()
      }
    })

    it("both tools are read-only (L0) and call the network; the family needs only a KeyValueStore", async () => {
      const web = await buildWeb({}, { env: { UGENT_SEARXNG_URL: searxng.origin } })
      try {
        for (const tool of Object.values(web.tools)) {
          expect(tool.trust).toBe(0)
          expect(tool.effects.callsNetwork).toBe(true)
          expect(tool.effects.writesFs).toBe(false)
        }
        expect(Web.family().prefix).toBe("world.tools")
        expectTypeOf<Family.Requirements<ReturnType<typeof Web.family>>>().toEqualTypeOf<KeyValueStore.KeyValueStore>()
      } finally {
        await web.close()
      }
    })
  })
})
