/**
 * The machinery of web.fetch's content: windows over a text, content types,
 * the pre-parse cut of scripts and styles, snippets as plain text.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { kindOf, parseContentType, plainText, stripHeavy, window } from "../../src/internal/web/content.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

describe("web content", () => {
  it.prop(
    "windows of any size walk any text: joined they are the text, and none ends inside a surrogate pair",
    { text: Schema.String, max: Schema.Int.check(Schema.isBetween({ minimum: 2, maximum: 50 })) },
    ({ text, max }) => {
      const parts: Array<string> = []
      let at: number | null = 0
      while (at !== null) {
        const { content, nextIndex } = window(text, at, max)
        expect(content.length).toBeLessThanOrEqual(max)
        if (nextIndex !== null) {
          expect(nextIndex).toBeGreaterThan(at)
          const last = content.charCodeAt(content.length - 1)
          expect(last >= 0xd800 && last <= 0xdbff).toBe(false)
        }
        parts.push(content)
        at = nextIndex
      }
      expect(parts.join("")).toBe(text)
    },
    { arbitrary: { runs: 300 } }
  )

  it("content types: parameters and case ignored, charset read", () => {
    expect(parseContentType('Text/HTML; Charset="ISO-8859-1"; foo=bar')).toEqual({
      mediaType: "text/html",
      charset: "ISO-8859-1"
    })
    expect(parseContentType(undefined)).toEqual({ mediaType: "", charset: undefined })
  })

  it.each([
    ["text/html", "<p>x</p>", "html"],
    ["application/xhtml+xml", "<p>x</p>", "html"],
    ["text/markdown", "# x", "text"],
    ["text/csv", "a,b", "text"],
    ["application/json", "{}", "text"],
    ["application/ld+json", "{}", "text"],
    ["application/atom+xml", "<feed/>", "text"],
    ["application/javascript", "x()", "text"],
    ["application/x-yaml", "a: 1", "text"],
    ["", "plain words", "text"],
    ["", "  <!DOCTYPE html><p>x", "html"],
    ["", "<p>starts with a paragraph", "html"],
    ["", "<pre>not in the sniffing list", "text"],
    ["image/png", "PNG", undefined],
    ["image/svg+xml", "<svg/>", undefined],
    ["application/pdf", "%PDF", undefined],
    ["application/octet-stream", "text really", undefined],
    ["application/zip", "PK", undefined],
    ["video/mp4", "x", undefined],
    ["text/plain", "a\u0000b", undefined],
    ["", "a\u0000b", undefined]
  ] as const)("%j with %j is %s", (type, body, kind) => {
    expect(kindOf(type, undefined, bytes(body))).toBe(kind)
  })

  it("invalid UTF-8 without a type is not text; UTF-16 with its byte order mark is", () => {
    expect(kindOf("", undefined, new Uint8Array([0x61, 0xff, 0xfe, 0x62]))).toBe(undefined)
    expect(kindOf("text/plain", undefined, new Uint8Array([0xff, 0xfe, 0x61, 0x00]))).toBe("text")
  })

  describe("stripHeavy", () => {
    it("cuts scripts, styles, SVG, noscript, templates and comments, keeping the rest in order", () => {
      const html =
        '<p>a</p><SCRIPT type="x">if (a < b) { s = "<p>no</p>" }</Script ><p>b</p><style>p{}</style><!-- <p>c</p> --><svg viewBox="0"><text>d</text></svg><noscript>e</noscript><template><p>f</p></template><p>g</p>'
      expect(stripHeavy(html)).toBe("<p>a</p><p>b</p><p>g</p>")
    })

    it("keeps elements whose names only start like a dropped one; an unclosed element runs to the end", () => {
      expect(stripHeavy("<scripts>x</scripts><styled>y</styled>")).toBe("<scripts>x</scripts><styled>y</styled>")
      expect(stripHeavy("<p>a</p><script>never closed <p>b</p>")).toBe("<p>a</p>")
      expect(stripHeavy("<p>a</p><!-- never closed")).toBe("<p>a</p>")
    })

    it("is linear: four times the hostile input takes about four times as long, not sixteen", () => {
      const time = (n: number) => {
        const hostile = `${"<a <!-x <scrip ".repeat(n)}<script>${"<p>".repeat(n)}`
        const started = performance.now()
        for (let i = 0; i < 3; i++) stripHeavy(hostile)
        return performance.now() - started
      }
      time(20_000)
      const small = time(25_000)
      const large = time(100_000)
      expect(large / small).toBeLessThan(8)
    })
  })

  it("snippets become plain text: tags removed, entities decoded, spaces collapsed, invalid references kept", () => {
    expect(plainText("<strong>Effect</strong>  &amp; &lt;co&gt; &#x27;x&#39; &quot;y&quot;&nbsp;z")).toBe(
      "Effect & <co> 'x' \"y\" z"
    )
    expect(plainText("&#99999999; &bogus; &#x110000;")).toBe("&#99999999; &bogus; &#x110000;")
  })
})
