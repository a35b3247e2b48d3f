/**
 * A model for the raw examples: a local HTTP server that answers each
 * request with the next answer of a script, the way the provider's API
 * answers (the examples point the official clients at it), and keeps the
 * requests it was sent.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface Replay extends AsyncDisposable {
  readonly url: string
  /** The JSON bodies received, in order. */
  readonly requests: Array<unknown>
}

/** Starts the server on a loopback port; the last answer repeats. */
export const replay = (answers: ReadonlyArray<unknown>): Promise<Replay> =>
  new Promise((resolve) => {
    const requests: Array<unknown> = []
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        requests.push(JSON.parse(Buffer.concat(chunks).toString("utf8") || "null"))
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(answers[Math.min(requests.length, answers.length) - 1]))
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        [Symbol.asyncDispose]: () => new Promise<void>((done) => server.close(() => done()))
      })
    })
  })
