/**
 * HTML to Markdown with turndown: links and images made absolute, scripts,
 * styles and embedded data dropped, the page's title returned apart. Its own
 * module, loaded with the first fetch that converts a page, so a server that
 * never converts HTML never loads turndown and its DOM.
 *
 * @internal
 */
import TurndownService from "turndown"

const absolute = (href: string, base: string): string | undefined => {
  try {
    const url = new URL(href, base)
    return url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:" ? url.href : undefined
  } catch {
    return undefined
  }
}

/** What the rules read of a DOM element (turndown's types name DOM classes this project's lib does not load). */
interface ElementLike {
  readonly nodeName: string
  readonly textContent: string | null
  getAttribute(name: string): string | null
}

const escapeTitle = (title: string): string => title.replace(/"/g, '\\"')

/** Converts HTML to Markdown (synchronously: see `markdown.ts`); the page's `<title>` is returned apart. */
export const toMarkdown = (
  html: string,
  base: string
): { readonly title: string | undefined; readonly markdown: string } => {
  let title: string | undefined
  const service = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "*"
  })
  service.remove(["script", "style", "noscript", "template", "iframe", "object", "embed", "canvas", "svg", "head"])
  service.addRule("title", {
    filter: "title",
    replacement: (_content, node) => {
      title ??= ((node as ElementLike).textContent ?? "").replace(/\s+/g, " ").trim()
      return ""
    }
  })
  service.addRule("absoluteLink", {
    filter: (node) => (node as ElementLike).nodeName === "A" && (node as ElementLike).getAttribute("href") !== null,
    replacement: (content, node) => {
      const element = node as ElementLike
      const href = absolute(element.getAttribute("href") ?? "", base)
      if (href === undefined || content.trim() === "") return content
      const linkTitle = element.getAttribute("title")
      return `[${content}](${href}${linkTitle ? ` "${escapeTitle(linkTitle)}"` : ""})`
    }
  })
  service.addRule("absoluteImage", {
    filter: "img",
    replacement: (_content, node) => {
      const element = node as ElementLike
      const alt = (element.getAttribute("alt") ?? "").replace(/\s+/g, " ").trim()
      // Inline data (data: URIs) is dropped: it is bytes, not text.
      const src = absolute(element.getAttribute("src") ?? "", base)
      return src === undefined ? alt : `![${alt}](${src})`
    }
  })
  const markdown = service
    .turndown(html)
    .replace(/\n{3,}/g, "\n\n")
    .trim()
  return { title: title === "" ? undefined : title, markdown }
}
