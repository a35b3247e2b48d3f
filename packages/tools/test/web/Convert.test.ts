/**
 * Threat 48: page content that the HTML converter cannot handle. Conversion
 * runs in a worker thread for every page, so neither a throw nor a slow page
 * reaches the event loop; what cannot be converted is a typed `NotConvertible`
 * (the page's fault, not counted by a circuit breaker) that tells the caller
 * to ask for the HTML itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ToolError } from "@ugent/core"
import { type WebFetch, WebError } from "@ugent/tools"
import { buildWeb, failureOf, outputOf, type Site, startSite } from "./fixture.ts"

const nest = (depth: number, open = "<div>", close = "</div>") => `${open.repeat(depth)}deep${close.repeat(depth)}`
const html = (body: string) => `<!doctype html><html><head><title>T</title></head><body>${body}</body></html>`

// 2,000 nested divs (22 KB): the main thread's stack overflows in the converter.
const nestedDivs = html(nest(2000))
// Tables nested 10,000 deep: deeper than the worker's stack, found out fast.
const nestedTables = html(nest(10_000, "<table><tr><td>", "</td></tr></table>"))
// Spans nested 10,000 deep: the parser's time grows with the square of the depth (seconds).
const nestedSpans = html(nest(10_000, "<span>", "</span>"))
// Just under 128 KB of 1,000-deep divs, side by side: about a second of conversion.
const slowPage = html(nest(1000).repeat(Math.floor((127 * 1024) / nest(1000).length)))

describe("web.fetch content (threat 48)", () => {
  let site: Site
  beforeAll(async () => {
    const route = (body: string) => (_req: unknown, res: import("node:http").ServerResponse) => {
      res.writeHead(200, { "content-type": "text/html" })
      res.end(body)
    }
    site = await startSite({
      "/divs": route(nestedDivs),
      "/tables": route(nestedTables),
      "/spans": route(nestedSpans),
      "/slow": route(slowPage),
      "/ok": route("<h1>fine</h1>")
    })
  })
  afterAll(() => site.close())

  const web = (limits: Partial<WebFetch.Limits> = {}) =>
    buildWeb({ allowHosts: [`127.0.0.1:${site.port}`], limits: { ...limits } })

  it("threat 48: a page of 2,000 nested <div>s is converted (in a worker), not a crash", async () => {
    const built = await web()
    try {
      const out = await outputOf<WebFetch.Output>(built.tools["web.fetch"], { url: `${site.origin}/divs` })
      expect(out.content).toBe("deep")
      expect(out.title).toBe("T")
    } finally {
      await built.close()
    }
  }, 30_000)

  it("threat 48: HTML nested deeper than the converter's stack is NotConvertible (too-deep), not a tool fault, and says to ask for raw: true", async () => {
    const built = await web()
    try {
      const error = await failureOf(built.tools["web.fetch"], { url: `${site.origin}/tables` })
      expect([error._tag, error.reason]).toEqual(["NotConvertible", "too-deep"])
      expect(ToolError.kindOf(error)).toBe("invalid_input")
      expect(ToolError.isToolFault(error)).toBe(false)
      expect(error.message).toContain("raw: true")
      // The HTML itself is still there for the asking.
      const raw = await outputOf<WebFetch.Output>(built.tools["web.fetch"], {
        url: `${site.origin}/tables`,
        raw: true,
        maxLength: 20
      })
      expect(raw.content).toBe("<!doctype html><html")
      // And the next page converts: the converter recovered.
      const ok = await outputOf<WebFetch.Output>(built.tools["web.fetch"], { url: `${site.origin}/ok` })
      expect(ok.content).toBe("# fine")
    } finally {
      await built.close()
    }
  }, 60_000)

  it("threat 48: a conversion over its time limit is stopped and NotConvertible (too-slow), not a timeout of the tool", async () => {
    const built = await web({ convertTimeout: "300 millis" })
    try {
      const started = Date.now()
      const error = await failureOf(built.tools["web.fetch"], { url: `${site.origin}/spans` })
      expect([error._tag, error.reason]).toEqual(["NotConvertible", "too-slow"])
      expect(ToolError.isToolFault(error)).toBe(false)
      expect(Date.now() - started).toBeLessThan(5000)
    } finally {
      await built.close()
    }
    // The converter recovered: the next page converts (under the default limit, as a thread may have to start).
    const next = await web()
    try {
      const ok = await outputOf<WebFetch.Output>(next.tools["web.fetch"], { url: `${site.origin}/ok` })
      expect(ok.content).toBe("# fine")
    } finally {
      await next.close()
    }
  }, 60_000)

  it("threat 48: conversions past the number of converter threads wait their turn within the limit, then are NotConvertible (busy)", async () => {
    const built = await web({ convertTimeout: "1 second" })
    try {
      const started = Date.now()
      const errors = await Promise.all(
        Array.from({ length: 8 }, (_, i) => failureOf(built.tools["web.fetch"], { url: `${site.origin}/spans?${i}` }))
      )
      const reasons = errors.map((e) => `${e._tag} ${e.reason}`)
      for (const reason of reasons) expect(["NotConvertible too-slow", "NotConvertible busy"]).toContain(reason)
      // Two to four threads convert at once: some of the eight spent their time waiting for one.
      expect(reasons, reasons.join(", ")).toContain("NotConvertible busy")
      expect(errors.every((e) => !ToolError.isToolFault(e))).toBe(true)
      // Waiting counts against each call's limit: eight calls are not eight seconds.
      expect(Date.now() - started).toBeLessThan(4000)
    } finally {
      await built.close()
    }
  }, 60_000)

  it("threat 48: the event loop keeps ticking while a page of almost 128 KB converts", async () => {
    const built = await web()
    try {
      // Warm: the first conversion may start the worker.
      await outputOf<WebFetch.Output>(built.tools["web.fetch"], { url: `${site.origin}/ok` })
      let last = performance.now()
      let longest = 0
      const timer = setInterval(() => {
        const now = performance.now()
        longest = Math.max(longest, now - last)
        last = now
      }, 5)
      const started = performance.now()
      try {
        const out = await outputOf<WebFetch.Output>(built.tools["web.fetch"], { url: `${site.origin}/slow` })
        expect(out.content.startsWith("deep")).toBe(true)
      } finally {
        // The gap up to now counts too: a stall at the end never lets the timer run again.
        longest = Math.max(longest, performance.now() - last)
        clearInterval(timer)
      }
      const took = performance.now() - started
      console.log(`fetch of the slow page: ${took.toFixed(0)} ms, longest event-loop gap: ${longest.toFixed(0)} ms`)
      // On the main thread the conversion was one stall as long as the whole fetch.
      expect(longest).toBeLessThan(Math.max(100, took / 3))
    } finally {
      await built.close()
    }
  }, 60_000)

  it("NotConvertible's message names the page and what to do", () => {
    const e = new WebError.NotConvertible({ url: "https://x.test/", reason: "busy", detail: "the converter is busy" })
    expect(e.message).toContain("https://x.test/")
    expect(e.message).toContain("raw: true")
  })
})
