/**
 * HTML to Markdown without holding the process: turndown is synchronous and
 * converts a few hundred kilobytes a second, so a small page is converted in
 * place and a large one (over 128 KB once scripts and styles are cut) in a
 * worker thread, which the fetch's time limit can stop (the worker is
 * terminated when the conversion is interrupted) and whose heap is capped. A
 * conversion that fails (the heap cap, a crash) falls back to the HTML
 * itself, with a note.
 *
 * @internal
 */
import { Worker } from "node:worker_threads"
import { Effect } from "effect"
import { stripHeavy } from "./content.ts"
import { toMarkdown } from "./html.ts"

/** Stripped HTML up to this many characters is converted in place. */
export const inlineLimit = 128 * 1024

/** The worker's heap cap, in MB: a page that needs more falls back to its HTML. */
const heapLimitMb = 768

// The sources run as .ts (Node 24 strips types); a built package runs the .js next to this module.
const workerUrl = new URL(`./markdownWorker.${import.meta.url.endsWith(".ts") ? "ts" : "js"}`, import.meta.url)

/** The result of a conversion: Markdown and title, or the HTML and why it was not converted. */
export type Converted =
  | { readonly _tag: "Markdown"; readonly title: string | undefined; readonly markdown: string }
  | { readonly _tag: "Unconverted"; readonly reason: string }

const inWorker = (html: string, base: string): Effect.Effect<Converted> =>
  Effect.callback<Converted>((resume) => {
    const worker = new Worker(workerUrl, {
      workerData: { html, base },
      resourceLimits: { maxOldGenerationSizeMb: heapLimitMb }
    })
    let settled = false
    const settle = (converted: Converted) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(converted))
      void worker.terminate()
    }
    worker.once("message", (message: { readonly title: string | undefined; readonly markdown: string }) =>
      settle({ _tag: "Markdown", title: message.title, markdown: message.markdown })
    )
    worker.once("error", (error: Error & { readonly code?: string }) =>
      settle({
        _tag: "Unconverted",
        reason:
          error.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? `the page needs more than ${heapLimitMb} MB to convert`
            : `the converter failed (${error.message})`
      })
    )
    worker.once("exit", (code) => settle({ _tag: "Unconverted", reason: `the converter stopped (exit code ${code})` }))
    return Effect.promise(() => worker.terminate())
  })

/** Converts HTML to Markdown, in place or in a worker by size. */
export const convert = (html: string, base: string): Effect.Effect<Converted> =>
  Effect.suspend(() => {
    const stripped = stripHeavy(html)
    if (stripped.length <= inlineLimit) {
      return Effect.sync(() => ({ _tag: "Markdown" as const, ...toMarkdown(stripped, base) }))
    }
    return inWorker(stripped, base)
  })
