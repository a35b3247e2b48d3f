/**
 * What the HTTP tests share: a temp workspace, an in-process server on an
 * ephemeral loopback port (`Http.serve` with `port: 0`), and small request
 * helpers that return status, headers and the parsed body.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Http, Mcp } from "@ugent/agentese"
import { Context, Effect, Layer, type Scope } from "effect"
import { HttpServer } from "effect/http"

/** A temp workspace with two small files, removed when the scope closes. */
export const workspace: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    const root = mkdtempSync(join(tmpdir(), "ugent-http-"))
    writeFileSync(join(root, "a.txt"), "alpha\nbeta\n")
    writeFileSync(join(root, "b.md"), "# b\n")
    return root
  }),
  (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

/** Serves the API in process on a free loopback port for the scope; returns its URL and root. */
export const serve = (
  options: Partial<Http.ServeOptions> & { readonly mcp?: boolean } = {}
): Effect.Effect<{ readonly url: string; readonly root: string }, never, Scope.Scope> =>
  Effect.gen(function* () {
    const root = options.root ?? (yield* workspace)
    const served = { stores: "memory" as const, port: 0, ...options, root }
    const context = yield* Layer.build(
      options.mcp === true ? Http.serve(served, Mcp.layerHttp({ path: "/mcp" })) : Http.serve(served)
    ).pipe(Effect.orDie)
    return { url: HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address), root }
  })

/** A reply's JSON, read field by field by the assertions (which check its shape). */
// biome-ignore lint/suspicious/noExplicitAny: the assertions are the type check of a reply's body
export type Json = any

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: Json
}

const reply = (response: Response) =>
  Effect.promise(async () => {
    const text = await response.text()
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body } as Reply
  })

export const get = (url: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(
    Effect.promise(() => fetch(url, { headers })),
    reply
  )

export const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  Effect.flatMap(
    Effect.promise(() =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body)
      })
    ),
    reply
  )

/**
 * A raw request with node:http, for headers fetch does not let a caller set (Host), a chunked body, or a path
 * sent as spelled (`path`: fetch would normalise `/v1/./x` and `..` away).
 */
export const raw = (
  url: string,
  options: {
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly chunks?: ReadonlyArray<string>
    readonly path?: string
  }
) =>
  Effect.promise(
    () =>
      new Promise<{ status: number; body: Json }>((resolve, reject) => {
        const { hostname, port, pathname, search } = new URL(url)
        const target = { hostname, port, path: options.path ?? `${pathname}${search}` }
        const req = httpRequest({ ...target, method: options.method ?? "GET", headers: options.headers }, (res) => {
          let text = ""
          res.setEncoding("utf8")
          res.on("data", (c) => {
            text += c
          })
          res.on("end", () => {
            let body: unknown = text
            try {
              body = JSON.parse(text)
            } catch {
              // not JSON
            }
            resolve({ status: res.statusCode ?? 0, body })
          })
        })
        req.on("error", (e) => {
          // The server may close the connection after answering a body that is too large.
          if ((e as { code?: string }).code === "ECONNRESET" || (e as { code?: string }).code === "EPIPE") return
          reject(e)
        })
        for (const chunk of options.chunks ?? []) req.write(chunk)
        req.end()
      })
  )

export const invokeUrl = (url: string, path: string) => `${url}/v1/invoke/${encodeURIComponent(path)}`
