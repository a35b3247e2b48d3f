/**
 * web.fetch against servers the tests start on loopback, reached through the
 * allow-list: conversion, paging, the cache, redirects, limits, content
 * types and failures. The address checks themselves are in Ssrf.test.ts.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Observer, ToolError, Trust } from "@ugent/core"
import type { WebFetch } from "@ugent/tools"
import { Context, Effect, Layer } from "effect"
import { Dns } from "effect/net"
import { KeyValueStore } from "effect/persistence"
import { TestClock } from "effect/testing"
import { buildWeb, endless, failureOf, outputOf, type Site, startSite } from "./fixture.ts"

const page = `<!doctype html>
<html><head><title>The  Page &amp; co</title><style>body { color: red }</style><script>alert("x")</script></head>
<body>
<h1>Heading</h1>
<p>Some <b>bold</b> and <a href="/other?x=1">a relative link</a> and <a href="javascript:alert(1)">a script link</a>.</p>
<ul><li>one</li><li>two</li></ul>
<pre><code>const x = 1</code></pre>
<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline">
<img src="img/logo.png" alt="logo">
<noscript>enable scripts</noscript>
</body></html>`

const paragraph = '<div><p>Some <b>bold</b> text and <a href="/x?y=1">a link</a>.</p><ul><li>one</li></ul></div>\n'
// Over 128 KB once scripts are cut.
const largeBody = `<script>${"var x = 1;".repeat(50_000)}</script>${paragraph.repeat(Math.ceil((200 * 1024) / paragraph.length))}`

describe("web.fetch", () => {
  let site: Site
  let other: Site
  let web: Awaited<ReturnType<typeof buildWeb>>
  const fetchOf = () => web.tools["web.fetch"]

  beforeAll(async () => {
    const latin1 = Buffer.from("caf\xe9 cr\xe8me", "latin1")
    site = await startSite({
      "/page": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        res.end(page)
      },
      "/plain": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end("line one\nline two\n")
      },
      "/json": (_req, res) => {
        res.writeHead(200, { "content-type": "application/problem+json" })
        res.end('{"a":[1,2,3]}')
      },
      "/latin1": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain; charset=ISO-8859-1" })
        res.end(latin1)
      },
      "/meta-charset": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" })
        res.end(Buffer.concat([Buffer.from('<meta charset="windows-1252"><p>'), latin1, Buffer.from("</p>")]))
      },
      "/untyped-text": (_req, res) => res.end("no type, but text"),
      "/untyped-html": (_req, res) => res.end("<!DOCTYPE html><h2>sniffed</h2>"),
      "/untyped-binary": (_req, res) => res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d])),
      "/png": (_req, res) => {
        res.writeHead(200, { "content-type": "image/png" })
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]))
      },
      "/pdf": (_req, res) => {
        res.writeHead(200, { "content-type": "application/pdf" })
        res.end("%PDF-1.7")
      },
      "/lying-text": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end(Buffer.from([0x41, 0x00, 0x42]))
      },
      "/long": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end(`${"a".repeat(9)}😀${"b".repeat(20)}`)
      },
      "/counted": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end(`request ${site.requests.filter((r) => r.url === "/counted").length}`)
      },
      "/redirect": (_req, res) => {
        res.writeHead(302, { location: "/page" })
        res.end()
      },
      "/redirect-absolute": (_req, res) => {
        res.writeHead(301, { location: `${site.origin}/plain#frag` })
        res.end()
      },
      "/loop": (_req, res) => {
        res.writeHead(307, { location: "/loop" })
        res.end()
      },
      "/away": (_req, res) => {
        res.writeHead(301, { location: "https://example.org/elsewhere" })
        res.end()
      },
      "/away-by-name": (_req, res) => {
        res.writeHead(302, { location: `http://localhost:${site.port}/page` })
        res.end()
      },
      "/to-other-port": (_req, res) => {
        res.writeHead(302, { location: `http://127.0.0.1:${other.port}/page` })
        res.end()
      },
      "/no-location": (_req, res) => {
        res.writeHead(302)
        res.end()
      },
      "/missing": (_req, res) => {
        res.writeHead(404, { "content-type": "text/html" })
        res.end("<h1>Not here</h1>")
      },
      "/broken": (_req, res) => {
        res.writeHead(503)
        res.end()
      },
      "/huge": endless("text/plain", Buffer.alloc(64 * 1024, 0x61), 200 * 1024 * 1024),
      "/slow": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        const timer = setInterval(() => res.write("tick\n"), 50)
        res.on("close", () => clearInterval(timer))
      },
      "/large-html": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" })
        res.end(`<title>Large</title>${largeBody}`)
      },
      "/huge-html": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" })
        res.end(`<title>Huge</title>${paragraph.repeat(Math.ceil((6 * 1024 * 1024) / paragraph.length))}`)
      },
      "/slow-headers": (_req, res) => {
        const timer = setTimeout(() => res.end("late"), 5000)
        res.on("close", () => clearTimeout(timer))
      }
    })
    other = await startSite({ "/page": (_req, res) => res.end("other") })
    web = await buildWeb({
      allowHosts: [`127.0.0.1:${site.port}`],
      limits: { maxBytes: 1024 * 1024, timeout: "1 second", connectTimeout: "500 millis", maxLength: 50_000 }
    })
  })
  afterAll(async () => {
    await web.close()
    await site.close()
    await other.close()
  })

  describe("content", () => {
    it("HTML → Markdown: headings, emphasis, lists, code, absolute links and images; scripts, styles and inline data dropped", async () => {
      const out = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/page` })
      expect(out.title).toBe("The Page & co")
      expect(out.contentType).toBe("text/html")
      expect(out.status).toBe(200)
      expect(out.content).toContain("# Heading")
      expect(out.content).toContain("Some **bold** and")
      expect(out.content).toContain(`[a relative link](${site.origin}/other?x=1)`)
      expect(out.content).toContain("a script link.")
      expect(out.content).toContain("-   one\n-   two")
      expect(out.content).toContain("```\nconst x = 1\n```")
      expect(out.content).toContain(`![logo](${site.origin}/img/logo.png)`)
      expect(out.content).not.toMatch(/alert|color: red|data:image|enable scripts|javascript:/)
    })

    it("raw: true returns the HTML itself", async () => {
      const out = await outputOf<WebFetch.Output>(fetchOf(), {
        url: `${site.origin}/page`,
        raw: true,
        maxLength: 50_000
      })
      expect(out.content).toBe(page)
      expect(out.title).toBeUndefined()
    })

    it("text, JSON (+json) and undeclared text are returned as they are", async () => {
      expect((await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/plain` })).content).toBe(
        "line one\nline two\n"
      )
      const json = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/json` })
      expect([json.content, json.contentType]).toEqual(['{"a":[1,2,3]}', "application/problem+json"])
      const untyped = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/untyped-text` })
      expect([untyped.content, untyped.contentType]).toEqual(["no type, but text", ""])
      expect((await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/untyped-html` })).content).toBe(
        "## sniffed"
      )
    })

    it("decodes the declared charset, or the HTML meta charset", async () => {
      expect((await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/latin1` })).content).toBe("café crème")
      expect((await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/meta-charset` })).content).toBe(
        "café crème"
      )
    })

    it("binary content is refused as not text: images, PDFs, NUL bytes under a text type, undeclared binary", async () => {
      for (const [path, type] of [
        ["/png", "image/png"],
        ["/pdf", "application/pdf"],
        ["/lying-text", "text/plain"],
        ["/untyped-binary", ""]
      ] as const) {
        const error = await failureOf(fetchOf(), { url: `${site.origin}${path}` })
        expect(error._tag).toBe("NotText")
        expect(error.contentType).toBe(type)
        expect(ToolError.kindOf(error)).toBe("invalid_input")
        expect(String(error.message)).toContain("is not text")
      }
    })

    it("HEAD returns the status and type without content, binary or not", async () => {
      const out = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/png`, method: "HEAD" })
      expect([out.status, out.contentType, out.content, out.totalLength]).toEqual([200, "image/png", "", 0])
      expect(site.requests.at(-1)?.method).toBe("HEAD")
    })

    it("sends a user agent, asks for no compression, and sends no trace headers", async () => {
      await outputOf(fetchOf(), { url: `${site.origin}/plain`, method: "HEAD" })
      const headers = site.requests.at(-1)?.headers ?? {}
      expect(headers["user-agent"]).toBe("ugent-web-fetch/0.2")
      expect(headers["accept-encoding"]).toBe("identity")
      expect(Object.keys(headers).filter((h) => /traceparent|b3|tracestate/.test(h))).toEqual([])
    })
  })

  describe("large pages", () => {
    it("every page, large or small, is converted off the event loop by a worker thread kept warm: two pages start at most one", async () => {
      const patient = await buildWeb({ allowHosts: [`127.0.0.1:${site.port}`] })
      // Node announces every worker thread it starts: count them instead of timing the loop.
      let workers = 0
      const onWorker = () => {
        workers++
      }
      process.on("worker", onWorker)
      try {
        const out = await outputOf<WebFetch.Output>(patient.tools["web.fetch"], {
          url: `${site.origin}/large-html`,
          maxLength: 50_000
        })
        expect(out.title).toBe("Large")
        expect(
          out.content.startsWith(`Some **bold** text and [a link](${site.origin}/x?y=1).\n\n-   one\n\nSome`)
        ).toBe(true)
        expect(out.content).not.toContain("var x")
        // One started for this page, or none if an earlier test left one warm.
        expect(workers).toBeLessThanOrEqual(1)
        const small = await outputOf<WebFetch.Output>(patient.tools["web.fetch"], {
          url: `${site.origin}/untyped-html`
        })
        expect(small.content).toBe("## sniffed")
        expect(workers).toBeLessThanOrEqual(1)
      } finally {
        process.off("worker", onWorker)
        await patient.close()
      }
    })

    it("the time limit stops a conversion that takes too long", async () => {
      const slow = await buildWeb({
        allowHosts: [`127.0.0.1:${site.port}`],
        limits: { maxBytes: 8 * 1024 * 1024, timeout: "1500 millis" }
      })
      try {
        const started = Date.now()
        const error = await failureOf(slow.tools["web.fetch"], { url: `${site.origin}/huge-html` })
        expect([error._tag, error.phase]).toEqual(["FetchTimeout", "total"])
        expect(Date.now() - started).toBeLessThan(5000)
      } finally {
        await slow.close()
      }
    })
  })

  describe("paging", () => {
    it("maxLength / startIndex / nextIndex walk the whole text, never splitting a surrogate pair", async () => {
      const url = `${site.origin}/long`
      const first = await outputOf<WebFetch.Output>(fetchOf(), { url, maxLength: 10 })
      // "a" x 9 then 😀 (two UTF-16 units): the window stops before the pair instead of cutting it.
      expect([first.content, first.nextIndex, first.truncated, first.totalLength]).toEqual(["a".repeat(9), 9, true, 31])
      expect(first.notice).toContain("startIndex 9")
      const second = await outputOf<WebFetch.Output>(fetchOf(), { url, maxLength: 10, startIndex: 9 })
      expect(second.content).toBe(`😀${"b".repeat(8)}`)
      const last = await outputOf<WebFetch.Output>(fetchOf(), { url, startIndex: 19 })
      expect([last.content, last.nextIndex, last.truncated]).toEqual(["b".repeat(12), null, false])
    })

    it("a startIndex past the end shows nothing and says so", async () => {
      const out = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/long`, startIndex: 500 })
      expect([out.content, out.nextIndex]).toEqual(["", null])
      expect(out.notice).toContain("past the end")
    })

    it("the default window is 5,000 characters, and maxLength above the family's maximum is invalid input", async () => {
      const page = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/huge` })
      expect(page.content.length).toBe(5000)
      const error = await failureOf(fetchOf(), { url: `${site.origin}/plain`, maxLength: 50_001 })
      expect(error._tag).toBe("InvalidInput")
    })
  })

  describe("cache", () => {
    it.effect(
      "a second call within 15 minutes (another window, same URL) is served from the cache; after, the page is fetched again",
      () =>
        Effect.gen(function* () {
          const url = `${site.origin}/counted`
          const run = (input: WebFetch.Input) =>
            Trust.gate(fetchOf()!)
              .run(input)
              .pipe(Effect.provide(Observer.layer({ id: "t", trust: 0 })))
          const before = site.requests.length
          const a = (yield* run({ url })) as WebFetch.Output
          const b = (yield* run({ url: `${url}#fragment`, startIndex: 2 })) as WebFetch.Output
          expect(site.requests.length - before).toBe(1)
          expect(a.content).toBe("request 1")
          expect(b.content).toBe("quest 1")
          expect(b.fetchedAt).toBe(a.fetchedAt)
          yield* TestClock.adjust("14 minutes")
          yield* run({ url })
          expect(site.requests.length - before).toBe(1)
          yield* TestClock.adjust("2 minutes")
          const c = (yield* run({ url })) as WebFetch.Output
          expect(site.requests.length - before).toBe(2)
          expect(c.content).toBe("request 2")
        })
    )

    it("GET and HEAD, Markdown and raw are cached apart", async () => {
      const url = `${site.origin}/page?cache-modes`
      const before = site.requests.length
      await outputOf(fetchOf(), { url })
      await outputOf(fetchOf(), { url, raw: true })
      await outputOf(fetchOf(), { url, method: "HEAD" })
      await outputOf(fetchOf(), { url })
      expect(site.requests.length - before).toBe(3)
    })

    it("failures are not cached", async () => {
      const before = site.requests.length
      await failureOf(fetchOf(), { url: `${site.origin}/missing` })
      await failureOf(fetchOf(), { url: `${site.origin}/missing` })
      expect(site.requests.length - before).toBe(2)
    })

    it("the cache lives in the host's KeyValueStore: two families on one store share it", async () => {
      const store = await Effect.runPromise(
        Effect.scoped(
          Effect.map(Layer.build(KeyValueStore.layerMemory), (ctx) => Context.get(ctx, KeyValueStore.KeyValueStore))
        )
      )
      const allowHosts = [`127.0.0.1:${site.port}`]
      const one = await buildWeb({ allowHosts }, { store })
      const two = await buildWeb({ allowHosts }, { store })
      try {
        const url = `${site.origin}/plain?shared-store`
        const before = site.requests.length
        await outputOf(one.tools["web.fetch"], { url })
        await outputOf(two.tools["web.fetch"], { url })
        expect(site.requests.length - before).toBe(1)
        expect((await Effect.runPromise(store.keys)).some((k) => k.startsWith("ugent/web.fetch/"))).toBe(true)
      } finally {
        await one.close()
        await two.close()
      }
    })
  })

  describe("redirects", () => {
    it("same-host redirects are followed (relative and absolute; the fragment dropped)", async () => {
      const out = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/redirect` })
      expect([out.url, out.finalUrl, out.status]).toEqual([`${site.origin}/redirect`, `${site.origin}/page`, 200])
      expect(out.content).toContain("# Heading")
      const abs = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/redirect-absolute` })
      expect([abs.finalUrl, abs.content]).toEqual([`${site.origin}/plain`, "line one\nline two\n"])
    })

    it("more than 5 same-host redirects fail with TooManyRedirects", async () => {
      const before = site.requests.length
      const error = await failureOf(fetchOf(), { url: `${site.origin}/loop` })
      expect([error._tag, error.limit]).toEqual(["TooManyRedirects", 5])
      expect(site.requests.length - before).toBe(6)
    })

    it("a redirect to another host is reported, not followed", async () => {
      const out = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/away` })
      expect(out.redirect).toEqual({ location: "https://example.org/elsewhere", status: 301 })
      expect(out.content).toBe(
        "Redirected to https://example.org/elsewhere (HTTP 301), another host; fetch it to follow."
      )
      // Another name for the same machine is another host too.
      const byName = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/away-by-name` })
      expect(byName.redirect?.location).toBe(`http://localhost:${site.port}/page`)
    })

    it("a redirect without a Location is a status failure", async () => {
      const error = await failureOf(fetchOf(), { url: `${site.origin}/no-location` })
      expect([error._tag, error.status]).toEqual(["HttpStatus", 302])
    })
  })

  describe("limits and failures", () => {
    it("a body over the byte limit is cut there, the connection dropped, and the result says so", async () => {
      site.written.bytes = 0
      const started = process.memoryUsage().rss
      const out = await outputOf<WebFetch.Output>(fetchOf(), { url: `${site.origin}/huge?limit`, maxLength: 10 })
      expect(out.bodyTruncated).toBe(true)
      expect(out.totalLength).toBe(1024 * 1024)
      expect(out.notice).toContain("only its first 1048576 bytes were read")
      // The server stopped long before its 200 MB: what it wrote is the limit plus socket buffers.
      await new Promise((ok) => setTimeout(ok, 100))
      expect(site.written.bytes).toBeLessThan(16 * 1024 * 1024)
      expect(process.memoryUsage().rss - started).toBeLessThan(100 * 1024 * 1024)
    })

    it("a body that never ends fails with the total time limit", async () => {
      const started = Date.now()
      const error = await failureOf(fetchOf(), { url: `${site.origin}/slow` })
      expect([error._tag, error.phase, error.millis]).toEqual(["FetchTimeout", "total", 1000])
      expect(ToolError.kindOf(error)).toBe("timeout")
      expect(Date.now() - started).toBeLessThan(3000)
    })

    it("headers that never come fail with the total time limit", async () => {
      const error = await failureOf(fetchOf(), { url: `${site.origin}/slow-headers` })
      expect([error._tag, error.phase]).toEqual(["FetchTimeout", "total"])
    })

    it("a resolver that never answers fails with the total time limit", async () => {
      const silent = Dns.make({ lookup: () => Effect.never })
      const stuck = await buildWeb({ limits: { timeout: "300 millis" } }, { dns: silent })
      try {
        const error = await failureOf(stuck.tools["web.fetch"], { url: "http://never.test/" })
        expect([error._tag, error.phase]).toEqual(["FetchTimeout", "total"])
      } finally {
        await stuck.close()
      }
    })

    it("a TLS handshake that never completes fails with the connect limit", async () => {
      const silent = net.createServer(() => {})
      await new Promise<void>((ok) => silent.listen(0, "127.0.0.1", ok))
      const port = (silent.address() as net.AddressInfo).port
      const tls = await buildWeb({ allowHosts: [`127.0.0.1:${port}`], limits: { connectTimeout: "300 millis" } })
      try {
        const started = Date.now()
        const error = await failureOf(tls.tools["web.fetch"], { url: `https://127.0.0.1:${port}/` })
        expect([error._tag, error.phase, error.millis]).toEqual(["FetchTimeout", "connect", 300])
        expect(Date.now() - started).toBeLessThan(2000)
      } finally {
        await tls.close()
        silent.close()
      }
    })

    it("a refused connection is FetchFailed (unavailable)", async () => {
      const closed = await startSite({})
      await closed.close()
      const refused = await buildWeb({ allowHosts: [`127.0.0.1:${closed.port}`] })
      try {
        const error = await failureOf(refused.tools["web.fetch"], { url: `${closed.origin}/` })
        expect([error._tag, error.reason]).toEqual(["FetchFailed", "connection refused"])
        expect(ToolError.kindOf(error)).toBe("unavailable")
      } finally {
        await refused.close()
      }
    })

    it("statuses other than success fail with HttpStatus and a hint", async () => {
      const missing = await failureOf(fetchOf(), { url: `${site.origin}/missing` })
      expect([missing._tag, missing.status]).toEqual(["HttpStatus", 404])
      expect(String(missing.message)).toContain("the page does not exist")
      const broken = await failureOf(fetchOf(), { url: `${site.origin}/broken` })
      expect(broken.status).toBe(503)
    })

    it("URLs that are not http(s), or carry credentials, are invalid input", async () => {
      for (const url of [
        "file:///etc/passwd",
        "ftp://example.com/",
        "not a url",
        `http://user:pw@127.0.0.1:${site.port}/`
      ]) {
        const error = await failureOf(fetchOf(), { url })
        expect(error._tag).toBe("InvalidInput")
      }
    })
  })

  it("the tool is read-only (L0) and declares that it calls the network", () => {
    const tool = fetchOf()!
    expect(tool.trust).toBe(0)
    expect(tool.effects).toMatchObject({ callsNetwork: true, writesFs: false, callsShell: false, idempotent: true })
  })
})
