/**
 * Fixtures for the web tests: loopback HTTP servers started by the test that
 * record every connection and request (so a test can assert that nothing
 * reached them), the web family built over a fresh memory store with an
 * optional static resolver, and runners that return a call's exit.
 */
import * as http from "node:http"
import type * as net from "node:net"
import { type Family, Observer, Trust } from "@ugent/core"
import { Web } from "@ugent/tools"
import { ConfigProvider, Effect, Exit, Layer, Scope } from "effect"
import { Dns, NetAddress } from "effect/net"
import { KeyValueStore } from "effect/persistence"

/** What a loopback server saw. */
export interface Site {
  readonly port: number
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly requests: Array<{
    readonly method: string
    readonly url: string
    readonly headers: http.IncomingHttpHeaders
  }>
  /** TCP connections accepted, whether or not a request followed. */
  readonly connections: () => number
  /** Bytes the handlers wrote to response bodies (see {@link counted}). */
  readonly written: { bytes: number }
  readonly close: () => Promise<void>
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, site: Site) => void

/** Starts a server on `host` (127.0.0.1 by default) answering each path with its handler (404 otherwise). */
export const startSite = async (routes: Readonly<Record<string, Handler>>, host = "127.0.0.1"): Promise<Site> => {
  const sockets = new Set<net.Socket>()
  let connections = 0
  const requests: Site["requests"] = []
  const written = { bytes: 0 }
  let site: Site | undefined
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers })
    const handler = routes[new URL(req.url ?? "/", "http://x").pathname]
    if (handler === undefined || site === undefined) {
      res.writeHead(404, { "content-type": "text/plain" })
      res.end("not found")
      return
    }
    handler(req, res, site)
  })
  server.on("connection", (socket) => {
    connections += 1
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((ok) => server.listen(0, host, ok))
  const port = (server.address() as net.AddressInfo).port
  site = {
    port,
    origin: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    requests,
    connections: () => connections,
    written,
    close: () =>
      new Promise<void>((ok) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => ok())
      })
  }
  return site
}

/** Writes `chunk` again and again (up to `limit` bytes) as fast as the peer reads, counting what was written. */
export const endless =
  (contentType: string, chunk: Uint8Array, limit: number): Handler =>
  (_req, res, site) => {
    res.writeHead(200, { "content-type": contentType })
    const pump = () => {
      while (site.written.bytes < limit && !res.destroyed) {
        site.written.bytes += chunk.length
        if (!res.write(chunk)) return void res.once("drain", pump)
      }
      res.end()
    }
    res.on("close", () => res.removeAllListeners("drain"))
    pump()
  }

/** The web family's tools, built over `store` (a fresh memory store by default), a resolver, and an environment. */
export const buildWeb = async (
  options: Web.Options = {},
  context: {
    readonly hosts?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
    readonly dns?: Dns.Dns["Service"] | undefined
    readonly store?: KeyValueStore.KeyValueStore | undefined
    readonly env?: Readonly<Record<string, string>> | undefined
  } = {}
): Promise<{
  readonly tools: Readonly<Record<string, Family.Closed>>
  readonly members: Readonly<Record<string, Family.Member>>
  readonly close: () => Promise<void>
}> => {
  const scope = Effect.runSync(Scope.make())
  const dns =
    context.dns !== undefined
      ? Layer.succeed(Dns.Dns, context.dns)
      : context.hosts !== undefined
        ? Layer.orDie(Dns.layerStatic({ hosts: context.hosts }))
        : Layer.empty
  const store =
    context.store !== undefined ? Layer.succeed(KeyValueStore.KeyValueStore, context.store) : KeyValueStore.layerMemory
  const members = await Effect.runPromise(
    Web.family(options).build.pipe(
      Effect.provide(Layer.mergeAll(dns, store)),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { ...context.env } })),
      Effect.provideService(Scope.Scope, scope)
    )
  )
  const tools = Object.fromEntries(Object.entries(members).map(([name, member]) => [name, member.tool]))
  return { tools, members, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** Runs a tool through the trust gate as an L0 observer and returns its exit. */
export const exitOf = (tool: Family.Closed | undefined, input: unknown) => {
  if (tool === undefined) throw new Error("the tool is not offered")
  return Effect.runPromise(
    Effect.exit(
      Trust.gate(tool)
        .run(input)
        .pipe(Effect.provide(Observer.layer({ id: "web-test", trust: 0 })))
    )
  )
}

/** Runs a tool with L0; its output, or the test fails with the tool's failure. */
export const outputOf = async <A>(tool: Family.Closed | undefined, input: unknown): Promise<A> => {
  const exit = await exitOf(tool, input)
  if (Exit.isSuccess(exit)) return exit.value as A
  throw new Error(`expected a success, got ${JSON.stringify(exit.cause)}`)
}

/** Runs a tool with L0; its typed failure, or the test fails. */
export const failureOf = async (
  tool: Family.Closed | undefined,
  input: unknown
): Promise<{ readonly _tag: string } & Record<string, unknown>> => {
  const exit = await exitOf(tool, input)
  if (Exit.isFailure(exit)) {
    const reason = exit.cause.reasons[0]
    if (reason !== undefined && reason._tag === "Fail") return reason.error as { readonly _tag: string }
    throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  }
  throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
}

/**
 * A resolver whose answer for a name may change from one lookup to the next
 * (`answer(host, n)` for the n-th lookup, from 1), counting its lookups.
 */
export const scriptedDns = (answer: (host: string, n: number) => ReadonlyArray<string>) => {
  const counter = { lookups: 0 }
  const dns = Dns.make({
    lookup: (host) =>
      Effect.sync(() => {
        counter.lookups += 1
        return answer(host, counter.lookups).map((a) => NetAddress.ipFromStringUnsafe(a))
      })
  })
  return { dns, counter }
}
