import { parentPort, workerData } from "node:worker_threads"
import { toMarkdown } from "./html.ts"

const { html, base } = workerData as { readonly html: string; readonly base: string }
parentPort?.postMessage(toMarkdown(html, base))
