/**
 * One HTTP exchange of web.fetch, connected to the addresses the guard
 * checked and to nothing else. Effect's node:http client does the exchange;
 * this module gives it, per request, a pair of agents whose `lookup` answers
 * with the checked addresses only (node:http is used rather than `fetch`
 * because only its agents let the connection be pinned this way), whose
 * sockets must connect (TCP, and TLS for https) within the connect limit, and
 * whose connected peer is verified once more against the pinned addresses.
 * The body is read up to a byte limit and the connection dropped there, so
 * memory stays bounded whatever the server sends. No compression is asked
 * for (`accept-encoding: identity`), so the limit counts what is read, and
 * no trace headers are sent to the site.
 *
 * @internal
 */
import * as http from "node:http"
import * as https from "node:https"
import type * as net from "node:net"
import type { Duplex } from "node:stream"
import * as tls from "node:tls"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Stream } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest } from "effect/http"
import ipaddr from "ipaddr.js"
import { FetchFailed, FetchTimeout } from "../../web/WebError.ts"
import { normalizeHostname } from "./allowList.ts"
import type { Pinned, Target } from "./guard.ts"

/** What a request needs beyond its target. */
export interface RequestOptions {
  readonly method: "GET" | "HEAD"
  readonly userAgent: string
  readonly maxBytes: number
  readonly connectTimeoutMillis: number
}

/** A response, its body read up to the byte limit. */
export interface Response {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  /** The body went on past the byte limit; `body` holds its first `maxBytes` bytes. */
  readonly bodyTruncated: boolean
}

/** Thrown into a socket that did not connect in time. */
class ConnectTimedOut extends Error {}

/** Thrown into a socket whose peer is not a pinned address (never expected: the lookup is pinned). */
class UnpinnedPeer extends Error {}

const canonical = (address: string): string => {
  try {
    return ipaddr.process(address).toNormalizedString()
  } catch {
    return address
  }
}

const pinnedLookup =
  (target: Target): net.LookupFunction =>
  (hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? options.family : undefined
    const candidates = target.addresses.filter((a) => wanted === undefined || a.family === wanted)
    const first = candidates[0]
    if (normalizeHostname(hostname) !== target.hostname || first === undefined) {
      const error: NodeJS.ErrnoException = new Error(`${hostname} was not checked for this request`)
      error.code = "ENOTFOUND"
      callback(error, "")
      return
    }
    if (options.all === true)
      callback(
        null,
        candidates.map((a: Pinned) => ({ address: a.address, family: a.family }))
      )
    else callback(null, first.address, first.family)
  }

/** Arms the connect limit on a new socket and verifies its peer once connected. */
const guardSocket = (socket: net.Socket, target: Target, connectTimeoutMillis: number): void => {
  const allowed = new Set(target.addresses.map((a) => canonical(a.address)))
  const connectedEvent = socket instanceof tls.TLSSocket ? "secureConnect" : "connect"
  const timer = setTimeout(
    () => socket.destroy(new ConnectTimedOut(`no connection within ${connectTimeoutMillis} ms`)),
    connectTimeoutMillis
  )
  socket.once(connectedEvent, () => clearTimeout(timer))
  socket.once("close", () => clearTimeout(timer))
  socket.once("connect", () => {
    const peer = socket.remoteAddress
    if (peer === undefined || !allowed.has(canonical(peer))) {
      socket.destroy(new UnpinnedPeer(`connected to ${peer ?? "an unknown address"}, which was not checked`))
    }
  })
}

class PinnedHttpAgent extends http.Agent {
  readonly target: Target
  readonly connectTimeoutMillis: number
  constructor(target: Target, connectTimeoutMillis: number) {
    super({ lookup: pinnedLookup(target) })
    this.target = target
    this.connectTimeoutMillis = connectTimeoutMillis
  }
  override createConnection(options: http.ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void) {
    const socket = super.createConnection(options, callback)
    guardSocket(socket as net.Socket, this.target, this.connectTimeoutMillis)
    return socket
  }
}

class PinnedHttpsAgent extends https.Agent {
  readonly target: Target
  readonly connectTimeoutMillis: number
  constructor(target: Target, connectTimeoutMillis: number) {
    super({ lookup: pinnedLookup(target) })
    this.target = target
    this.connectTimeoutMillis = connectTimeoutMillis
  }
  override createConnection(options: https.RequestOptions, callback?: (err: Error | null, stream: Duplex) => void) {
    const socket = super.createConnection(options, callback)
    guardSocket(socket as net.Socket, this.target, this.connectTimeoutMillis)
    return socket
  }
}

const causeChain = (error: unknown): ReadonlyArray<unknown> => {
  const chain: Array<unknown> = []
  let current: unknown = error
  while (current !== undefined && current !== null && chain.length < 8) {
    chain.push(current)
    current = (current as { readonly cause?: unknown }).cause ?? (current as { readonly reason?: unknown }).reason
  }
  return chain
}

const reasons: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset by the server",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "the connection timed out",
  EPIPE: "the connection broke",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "its TLS certificate chain is self-signed",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "its TLS certificate cannot be verified",
  ERR_TLS_CERT_ALTNAME_INVALID: "its TLS certificate is for another host name"
}

const toFetchError = (
  url: string,
  connectTimeoutMillis: number,
  error: HttpClientError.HttpClientError
): FetchFailed | FetchTimeout => {
  const chain = causeChain(error)
  if (chain.some((c) => c instanceof ConnectTimedOut)) {
    return new FetchTimeout({ url, phase: "connect", millis: connectTimeoutMillis })
  }
  const unpinned = chain.find((c) => c instanceof UnpinnedPeer)
  if (unpinned !== undefined) return new FetchFailed({ url, reason: (unpinned as Error).message })
  for (const c of chain) {
    const code = (c as { readonly code?: unknown }).code
    if (typeof code === "string") return new FetchFailed({ url, reason: reasons[code] ?? `connection error ${code}` })
  }
  return new FetchFailed({
    url,
    reason: error.reason._tag === "DecodeError" ? "the body could not be read" : error.message
  })
}

const readCapped = (
  stream: Stream.Stream<Uint8Array, HttpClientError.HttpClientError>,
  maxBytes: number
): Effect.Effect<{ readonly body: Uint8Array; readonly truncated: boolean }, HttpClientError.HttpClientError> =>
  Effect.gen(function* () {
    const chunks: Array<Uint8Array> = []
    let size = 0
    let truncated = false
    yield* Stream.runForEachWhile(stream, (chunk) =>
      Effect.sync(() => {
        const room = maxBytes - size
        if (chunk.length > room) {
          if (room > 0) chunks.push(chunk.subarray(0, room))
          size = maxBytes
          truncated = true
          return false
        }
        chunks.push(chunk)
        size += chunk.length
        return true
      })
    )
    return { body: Buffer.concat(chunks, size), truncated }
  })

/** Sends one request to a checked target and reads its response (redirects are not followed here). */
export const request = (target: Target, options: RequestOptions): Effect.Effect<Response, FetchFailed | FetchTimeout> =>
  Effect.scoped(
    Effect.gen(function* () {
      const agents = yield* Effect.acquireRelease(
        Effect.sync(() => ({
          http: new PinnedHttpAgent(target, options.connectTimeoutMillis),
          https: new PinnedHttpsAgent(target, options.connectTimeoutMillis)
        })),
        (agents) =>
          Effect.sync(() => {
            agents.http.destroy()
            agents.https.destroy()
          })
      )
      const client = yield* NodeHttpClient.makeNodeHttp.pipe(Effect.provideService(NodeHttpClient.HttpAgent, agents))
      const req = HttpClientRequest.make(options.method)(target.url, {
        headers: {
          "user-agent": options.userAgent,
          accept:
            "text/html, text/markdown;q=0.9, text/plain;q=0.9, application/json;q=0.8, application/xml;q=0.8, */*;q=0.1",
          "accept-encoding": "identity"
        }
      })
      const response = yield* client.execute(req)
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(response.headers)) headers[name] = value
      // Only a success has a body worth reading: redirects and failures are reported by their status.
      if (options.method === "HEAD" || response.status < 200 || response.status >= 300) {
        return { status: response.status, headers, body: new Uint8Array(0), bodyTruncated: false }
      }
      const { body, truncated } = yield* readCapped(response.stream, options.maxBytes)
      return { status: response.status, headers, body, bodyTruncated: truncated }
    }).pipe(
      Effect.provideService(HttpClient.TracerPropagationEnabled, false),
      Effect.mapError((error) => toFetchError(target.url.href, options.connectTimeoutMillis, error))
    )
  )

/** Node's HTTP client with no address pinning: for a search provider, an endpoint the operator chose. */
export const plainLayer = NodeHttpClient.layerNodeHttp
