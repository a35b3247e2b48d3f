/**
 * HTML to Markdown off the event loop, for every page. turndown is
 * synchronous, converts a few hundred kilobytes a second and throws on pages
 * it cannot handle (2,000 nested `<div>`s overflow the main thread's stack),
 * so each conversion runs in a worker thread: one is kept warm (its start,
 * turndown's load included, costs 100–250 ms; a warm round trip under a
 * millisecond), a few more start when it is busy. A conversion is bounded in
 * time (the worker is terminated past the limit), in depth (the worker's
 * stack: an overflow is reported, not thrown) and in memory (the worker's
 * heap cap). What it cannot convert is told apart from a failure of the tool:
 * the page is the problem, and the caller can ask for the HTML itself.
 *
 * Own code rather than Effect's worker pool: a synchronous conversion can
 * only be stopped by terminating its thread, which a pool that interrupts by
 * message cannot do.
 *
 * @internal
 */
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { Duration, Effect, Semaphore } from "effect"
import { stripHeavy } from "./content.ts"

/** The worker's heap cap, in MB: a page that needs more is not converted. */
const heapLimitMb = 768

/** Workers converting at once; more conversions wait their turn within their time limit. */
const maxWorkers = Math.max(2, Math.min(4, availableParallelism()))

// The sources run as .ts (Node 24 strips types); a built package runs the .js next to this module.
const workerUrl = new URL(`./markdownWorker.${import.meta.url.endsWith(".ts") ? "ts" : "js"}`, import.meta.url)

/** Why a page was not converted. */
export type Refusal = "too-deep" | "too-large" | "too-slow" | "busy" | "failed"

/** The result of a conversion: Markdown and title, or why the page could not be converted. */
export type Converted =
  | { readonly _tag: "Markdown"; readonly title: string | undefined; readonly markdown: string }
  | { readonly _tag: "Unconverted"; readonly reason: Refusal; readonly detail: string }

interface Reply {
  readonly title?: string | undefined
  readonly markdown?: string
  readonly error?: { readonly name: string; readonly message: string }
}

const permits = Semaphore.makeUnsafe(maxWorkers)

// The warm worker, idle; it holds no reference to the event loop while idle, so it never keeps the process alive.
let idle: Worker | undefined

const spawn = (): Worker => new Worker(workerUrl, { resourceLimits: { maxOldGenerationSizeMb: heapLimitMb } })

/** Takes the warm worker, or starts one. */
const take = (): Worker => {
  const worker = idle ?? spawn()
  idle = undefined
  worker.ref()
  return worker
}

/** Keeps a worker warm: it waits unreferenced, and is forgotten if it dies meanwhile. */
const keepWarm = (worker: Worker): void => {
  worker.unref()
  worker.once("exit", () => {
    if (idle === worker) idle = undefined
  })
  idle = worker
}

/**
 * Keeps a healthy worker warm (one at most); terminates any other, and then
 * starts a fresh one to keep warm, so the next page does not wait for a
 * thread to start within its time limit.
 */
const give = (worker: Worker, healthy: boolean): void => {
  worker.removeAllListeners("message").removeAllListeners("error").removeAllListeners("exit")
  // An error once the call is over (the heap cap hit while terminating) is nobody's: unheard, it would throw.
  worker.on("error", () => undefined)
  if (healthy && idle === undefined) {
    keepWarm(worker)
    return
  }
  void worker.terminate()
  if (!healthy && idle === undefined) {
    const fresh = spawn()
    fresh.on("error", () => undefined)
    keepWarm(fresh)
  }
}

const refusal = (reason: Refusal, detail: string): Converted => ({ _tag: "Unconverted", reason, detail })

/** One conversion on a worker of its own for the call; the worker goes back warm only after a clean answer. */
const onWorker = (html: string, base: string): Effect.Effect<Converted> =>
  Effect.callback<Converted>((resume) => {
    const worker = take()
    let settled = false
    const settle = (converted: Converted, healthy: boolean) => {
      if (settled) return
      settled = true
      give(worker, healthy)
      resume(Effect.succeed(converted))
    }
    worker.once("message", (reply: Reply) => {
      if (reply.error === undefined) {
        settle({ _tag: "Markdown", title: reply.title, markdown: reply.markdown ?? "" }, true)
      } else if (reply.error.name === "RangeError" && /call stack/i.test(reply.error.message)) {
        settle(refusal("too-deep", "its elements nest too deeply"), false)
      } else {
        settle(refusal("failed", `the converter failed (${reply.error.message})`), false)
      }
    })
    worker.once("error", (error: Error & { readonly code?: string }) =>
      settle(
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? refusal("too-large", `it needs more than ${heapLimitMb} MB to convert`)
          : refusal("failed", `the converter failed (${error.message})`),
        false
      )
    )
    worker.once("exit", (code) => settle(refusal("failed", `the converter stopped (exit code ${code})`), false))
    worker.postMessage({ html, base })
    // Interrupted (the time limit, the fetch's own limit): the thread is stopped, whatever it was doing.
    return Effect.sync(() => {
      if (settled) return
      settled = true
      give(worker, false)
    })
  })

/**
 * Converts HTML to Markdown in a worker thread, within `limit`: waiting for
 * a worker and converting both count against it. Past the limit, a call that
 * spent most of it waiting was refused because the converters were busy.
 */
export const convert = (html: string, base: string, limit: Duration.Input): Effect.Effect<Converted> =>
  Effect.suspend(() => {
    const millis = Duration.toMillis(Duration.fromInputUnsafe(limit))
    let startedAt: number | undefined
    const stripped = stripHeavy(html)
    const run = Effect.suspend(() => {
      startedAt = Date.now()
      return onWorker(stripped, base)
    })
    return permits.withPermit(run).pipe(
      Effect.timeoutOrElse({
        duration: limit,
        orElse: () =>
          Effect.sync(() =>
            startedAt !== undefined && Date.now() - startedAt >= millis / 2
              ? refusal("too-slow", `converting it takes longer than ${Duration.format(Duration.millis(millis))}`)
              : refusal("busy", "the converters were busy with other pages")
          )
      })
    )
  })
