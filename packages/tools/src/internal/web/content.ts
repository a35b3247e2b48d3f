/**
 * From response bytes to the text web.fetch returns: which content types are
 * text (HTML, `text/*`, JSON, XML, JavaScript, YAML, TOML; a missing type is
 * sniffed, HTML by the signatures of the WHATWG MIME sniffing standard), the
 * character set (byte order mark, then the header, then an HTML
 * `<meta charset>`, then UTF-8), the heavy elements cut before HTML is
 * converted (the conversion itself is in `html.ts`), and the window of
 * characters one call shows.
 *
 * @internal
 */

/** What the body is: HTML (converted to Markdown unless raw), or other text. */
export type Kind = "html" | "text"

/** The media type (lower case, no parameters) and charset of a `content-type` header. */
export const parseContentType = (
  header: string | undefined
): { readonly mediaType: string; readonly charset: string | undefined } => {
  if (header === undefined) return { mediaType: "", charset: undefined }
  const [type = "", ...params] = header.split(";")
  let charset: string | undefined
  for (const param of params) {
    const [name, value] = param.split("=", 2)
    if (name?.trim().toLowerCase() === "charset" && value !== undefined) {
      charset = value.trim().replace(/^"(.*)"$/, "$1")
    }
  }
  return { mediaType: type.trim().toLowerCase(), charset }
}

const textApplications = new Set([
  "application/json",
  "application/xml",
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/x-ndjson",
  "application/graphql",
  "application/sql"
])

const sniffWindow = 8192

// The HTML signatures of the WHATWG MIME sniffing standard: one of these tags (or a comment) first, then a space or `>`.
const htmlSignature =
  /^(?:<!doctype html|<html|<head|<script|<iframe|<h1|<div|<font|<table|<a|<style|<title|<b|<body|<br|<p|<!--)(?:[\s>]|$)/i

const bomEncoding = (body: Uint8Array): string | undefined => {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return "utf-8"
  if (body[0] === 0xfe && body[1] === 0xff) return "utf-16be"
  if (body[0] === 0xff && body[1] === 0xfe) return "utf-16le"
  return undefined
}

const isWide = (charset: string | undefined): boolean => charset !== undefined && /^utf-?(16|32)/i.test(charset)

const hasNul = (body: Uint8Array): boolean => body.subarray(0, sniffWindow).includes(0)

const looksLikeUtf8 = (body: Uint8Array): boolean => {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(body.subarray(0, sniffWindow), { stream: true })
    return true
  } catch {
    return false
  }
}

/**
 * Whether the body is text, and which kind; `undefined` when it is not
 * (a binary type, or a text type whose first 8 KB hold a NUL byte).
 */
export const kindOf = (mediaType: string, charset: string | undefined, body: Uint8Array): Kind | undefined => {
  const wide = isWide(bomEncoding(body) ?? charset)
  if (mediaType === "") {
    if (wide) return "text"
    if (hasNul(body) || !looksLikeUtf8(body)) return undefined
    const head = new TextDecoder().decode(body.subarray(0, 512)).trimStart()
    return htmlSignature.test(head) ? "html" : "text"
  }
  const html = mediaType === "text/html" || mediaType === "application/xhtml+xml"
  const text =
    html ||
    mediaType.startsWith("text/") ||
    textApplications.has(mediaType) ||
    (mediaType.startsWith("application/") && (mediaType.endsWith("+json") || mediaType.endsWith("+xml")))
  if (!text || (!wide && hasNul(body))) return undefined
  return html ? "html" : "text"
}

const metaCharset = (body: Uint8Array): string | undefined => {
  const head = new TextDecoder("latin1").decode(body.subarray(0, 1024))
  return /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1]
}

/** Decodes the body: byte order mark, then the declared charset, then `<meta charset>` for HTML, then UTF-8. */
export const decode = (body: Uint8Array, charset: string | undefined, kind: Kind): string => {
  const label = bomEncoding(body) ?? charset ?? (kind === "html" ? metaCharset(body) : undefined) ?? "utf-8"
  try {
    return new TextDecoder(label).decode(body)
  } catch {
    // An unknown label (RangeError): read it as UTF-8, as browsers fall back to a default.
    return new TextDecoder("utf-8").decode(body)
  }
}

const dropped = ["script", "style", "svg", "noscript", "template"]

/**
 * Cuts the elements that never hold page text (scripts, styles, SVG,
 * noscript, templates) and comments out of HTML before it is parsed: on real
 * pages they are often most of the bytes. One forward scan with `indexOf`,
 * linear in the length whatever the input; an element left open runs to the
 * end, as a browser reads it.
 */
export const stripHeavy = (html: string): string => {
  const lower = html.toLowerCase()
  const parts: Array<string> = []
  let at = 0
  let from = 0
  while (true) {
    const open = lower.indexOf("<", from)
    if (open < 0) break
    let end = -1
    if (lower.startsWith("<!--", open)) {
      const close = lower.indexOf("-->", open + 4)
      end = close < 0 ? html.length : close + 3
    } else {
      const name = dropped.find(
        (tag) => lower.startsWith(tag, open + 1) && /[\s/>]/.test(lower[open + 1 + tag.length] ?? "")
      )
      if (name !== undefined) {
        const close = lower.indexOf(`</${name}`, open + 1 + name.length)
        const closeEnd = close < 0 ? -1 : lower.indexOf(">", close)
        end = closeEnd < 0 ? html.length : closeEnd + 1
      }
    }
    if (end < 0) {
      from = open + 1
      continue
    }
    parts.push(html.slice(at, open))
    at = end
    from = end
  }
  parts.push(html.slice(at))
  return parts.join("")
}

/** The characters one call shows: from `start`, at most `max`, never splitting a surrogate pair at the end. */
export const window = (
  text: string,
  start: number,
  max: number
): { readonly content: string; readonly nextIndex: number | null } => {
  const from = Math.min(start, text.length)
  let end = Math.min(from + max, text.length)
  if (end < text.length && end > from + 1) {
    const last = text.charCodeAt(end - 1)
    if (last >= 0xd800 && last <= 0xdbff) end -= 1
  }
  return { content: text.slice(from, end), nextIndex: end < text.length ? end : null }
}

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " }

/** A search snippet as plain text: tags removed, common entities decoded, spaces collapsed. */
export const plainText = (snippet: string): string =>
  snippet
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]+);/gi, (whole, name: string) => {
      if (!name.startsWith("#")) return entities[name.toLowerCase()] ?? whole
      const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1))
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    })
    .replace(/\s+/g, " ")
    .trim()
