/**
 * The worker thread of `markdown.ts`: converts one page per message and
 * answers with the Markdown, or with the error the converter threw (a stack
 * overflow on deep nesting is an answer, not a crash).
 *
 * @internal
 */
import { parentPort } from "node:worker_threads"
import { toMarkdown } from "./html.ts"

parentPort?.on("message", ({ html, base }: { readonly html: string; readonly base: string }) => {
  try {
    parentPort?.postMessage(toMarkdown(html, base))
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e))
    parentPort?.postMessage({ error: { name: error.name, message: error.message } })
  }
})
