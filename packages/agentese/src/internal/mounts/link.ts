/**
 * The link to one mounted MCP server: the official SDK client over stdio (a
 * command ugent starts) or streamable HTTP (a URL), kept open while the
 * server runs. A connection that closes (the process exited, the server went
 * away) is made again on the next call, with back-off when making it fails;
 * a call that cannot be made, or whose answer is not a tool result, fails
 * with a {@link Failure} that the mount turns into its typed error.
 *
 * The SDK is loaded on first use, so a server without mounts never loads it.
 *
 * @internal
 */
import { Clock, Effect, Semaphore } from "effect"

/** Where the server is: a command to start, or a streamable-HTTP URL. */
export type Target =
  | {
      readonly command: string
      readonly args?: ReadonlyArray<string> | undefined
      readonly env?: Readonly<Record<string, string>> | undefined
      readonly cwd?: string | undefined
    }
  | { readonly url: string; readonly headers?: Readonly<Record<string, string>> | undefined }

/** A tool as the server lists it (what the SDK's schema guarantees, and the rest as it came). */
export interface ListedTool {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly annotations?:
    | {
        readonly title?: string | undefined
        readonly readOnlyHint?: boolean | undefined
        readonly destructiveHint?: boolean | undefined
        readonly idempotentHint?: boolean | undefined
        readonly openWorldHint?: boolean | undefined
      }
    | undefined
}

/** A tool result as the server sent it (`isError` results are failures, see {@link Failure}). */
export interface Result {
  readonly content: ReadonlyArray<Record<string, unknown>>
  readonly structuredContent?: Record<string, unknown>
}

/**
 * Why a call or the start failed: the server cannot be reached (`unavailable`),
 * its answer was too large (`too-large`) or not a tool result (`protocol`), or
 * the tool itself reported an error (`tool`, with the server's text).
 */
export interface Failure {
  readonly reason: "unavailable" | "too-large" | "protocol" | "tool"
  readonly detail: string
}

/** The open link. */
export interface Link {
  /** The server's own name and version, from its `initialize` answer. */
  readonly server: { readonly name: string; readonly version: string }
  /** The tools it listed when the link opened. */
  readonly tools: ReadonlyArray<ListedTool>
  /** Calls a tool; `progress` hears the server's progress notifications of the call. */
  readonly call: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    progress?: (report: {
      readonly progress: number
      readonly total?: number | undefined
      readonly message?: string | undefined
    }) => void
  ) => Effect.Effect<Result, Failure>
  /** The process id of the server ugent started (stdio), while it runs. */
  readonly pid: () => number | undefined
}

export interface Options {
  /** The largest answer read, in bytes. */
  readonly maxResultBytes: number
  /** How long starting (initialize, the tool list) may take, in milliseconds. */
  readonly startMillis: number
}

type ClientModule = typeof import("@modelcontextprotocol/sdk/client/index.js")
type StdioModule = typeof import("@modelcontextprotocol/sdk/client/stdio.js")
type HttpModule = typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js")
type TypesModule = typeof import("@modelcontextprotocol/sdk/types.js")
type Client = InstanceType<ClientModule["Client"]>

interface Sdk {
  readonly Client: ClientModule["Client"]
  readonly StdioClientTransport: StdioModule["StdioClientTransport"]
  readonly StreamableHTTPClientTransport: HttpModule["StreamableHTTPClientTransport"]
  readonly McpError: TypesModule["McpError"]
  readonly ProgressNotificationSchema: TypesModule["ProgressNotificationSchema"]
}

let sdk: Promise<Sdk> | undefined
const loadSdk = (): Promise<Sdk> => {
  sdk ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ]).then(([client, stdio, http, types]) => ({
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    McpError: types.McpError,
    ProgressNotificationSchema: types.ProgressNotificationSchema
  }))
  return sdk
}

const messageOf = (e: unknown): string => {
  if (e instanceof Error) {
    const code = (e as { readonly code?: unknown }).code
    const own = typeof code === "string" && !e.message.includes(code) ? `${e.message} (${code})` : e.message
    // fetch says only "fetch failed"; its cause says why (ECONNREFUSED, a certificate, a name not found).
    return e.cause instanceof Error ? `${own}: ${messageOf(e.cause)}` : own
  }
  return String(e)
}

/** The SDK's schema check of a message failed (zod's error, by its shape: its class differs between versions). */
const isSchemaError = (e: unknown): boolean =>
  e instanceof Error && Array.isArray((e as { readonly issues?: unknown }).issues)

const oneLine = (s: string, max = 600): string => {
  const line = s.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max)}…` : line
}

/** The marker of an answer cut at the limit, thrown into the SDK's reading of an HTTP body. */
const tooLargeMarker = "ugent: the answer exceeds"

/** A fetch whose POST answers (one per request) stop past `max` bytes, so no answer fills the memory. */
const cappedFetch =
  (max: number): typeof fetch =>
  async (input, init) => {
    const response = await fetch(input, init)
    if (response.body === null || (init?.method ?? "GET").toUpperCase() !== "POST") return response
    let seen = 0
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength
          if (seen > max) controller.error(new Error(`${tooLargeMarker} ${max} bytes`))
          else controller.enqueue(chunk)
        }
      })
    )
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers
    })
  }

/** One connection: the client and what is known of how it ended. */
interface Connection {
  readonly client: Client
  readonly pid: () => number | undefined
  closed: boolean
  /** Whether the SDK dropped it for an answer over the limit (it says so only through `onerror`). */
  overflowed: boolean
}

/**
 * Whether a started server still runs: its process may have exited before
 * the SDK hears its pipes close, and a call sent then is lost.
 */
const alive = (connection: Connection): boolean => {
  const pid = connection.pid()
  if (pid === undefined) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as { readonly code?: unknown }).code !== "ESRCH"
  }
}

/** The SDK's own request timeout is out of the way: the road's time limit cuts a call (and cancels it there). */
const noTimeout = 2_147_483_647

/** Back-off after failed restarts: 1 s, 2 s, 4 s, … at most 30 s. */
const backoffMillis = (failures: number): number => Math.min(30_000, 1000 * 2 ** Math.max(0, failures - 1))

/**
 * Opens the link: starts (or reaches) the server, initializes, lists its
 * tools; fails with the reason, the server's last words on stderr included.
 * The link closes (and its process is stopped) when the scope closes.
 */
export const open = (target: Target, options: Options) =>
  Effect.gen(function* () {
    const mcp = yield* Effect.tryPromise({
      try: loadSdk,
      catch: (e): Failure => ({
        reason: "unavailable",
        detail: `the MCP SDK (@modelcontextprotocol/sdk) could not be loaded: ${messageOf(e)}`
      })
    })
    // Who hears each call's progress, by the token sent with it. The SDK's own `onprogress` drops a notification
    // that arrives in one read with the result (it forgets the call before it runs the notification's handler).
    type Listener = (report: {
      readonly progress: number
      readonly total?: number | undefined
      readonly message?: string | undefined
    }) => void
    const listeners = new Map<string, Listener>()
    let nextToken = 0
    // The last lines the server wrote to stderr, to say why it did not start or stopped.
    const stderr: Array<string> = []
    const said = () => (stderr.length === 0 ? "" : ` Its last words on stderr: ${oneLine(stderr.join(" | "), 400)}`)

    const connect = async (): Promise<Connection> => {
      const transport =
        "command" in target
          ? new mcp.StdioClientTransport({
              command: target.command,
              args: [...(target.args ?? [])],
              // Only the SDK's short list of harmless variables (PATH, HOME, …) and the mount's own: no key or secret of ours.
              ...(target.env !== undefined ? { env: { ...target.env } } : {}),
              ...(target.cwd !== undefined ? { cwd: target.cwd } : {}),
              stderr: "pipe",
              maxBufferSize: options.maxResultBytes
            })
          : new mcp.StreamableHTTPClientTransport(new URL(target.url), {
              requestInit: { headers: { ...(target.headers ?? {}) } },
              fetch: cappedFetch(options.maxResultBytes)
            })
      if ("stderr" in transport && transport.stderr !== null) {
        transport.stderr.on("data", (chunk: Buffer) => {
          for (const line of chunk.toString("utf8").split("\n")) {
            if (line.trim() === "") continue
            stderr.push(line.trim())
            if (stderr.length > 20) stderr.shift()
          }
        })
      }
      const client = new mcp.Client({ name: "ugent", version: "0.1.0" }, { capabilities: {} })
      const connection: Connection = {
        client,
        pid: () => ("pid" in transport ? (transport.pid ?? undefined) : undefined),
        closed: false,
        overflowed: false
      }
      client.onclose = () => {
        connection.closed = true
      }
      client.setNotificationHandler(mcp.ProgressNotificationSchema, (notification) => {
        const { progressToken, progress, total, message } = notification.params
        listeners.get(String(progressToken))?.({ progress, total, message })
      })
      client.onerror = (e) => {
        if (messageOf(e).includes("ReadBuffer exceeded")) connection.overflowed = true
      }
      try {
        await client.connect(transport, { timeout: options.startMillis })
      } catch (e) {
        await client.close().catch(() => undefined)
        throw e
      }
      return connection
    }

    const startFailure = (e: unknown): Failure => {
      const what = "command" in target ? `the command ${target.command}` : `the URL ${target.url}`
      const text = messageOf(e)
      const detail = /ENOENT/.test(text)
        ? `${what} was not found (ENOENT): check the command and PATH`
        : /EACCES/.test(text)
          ? `${what} cannot be run (permission denied)`
          : /timed out|timeout/i.test(text)
            ? `${what} did not answer initialize and tools/list within ${options.startMillis / 1000} s`
            : /Connection closed/i.test(text)
              ? `${what} closed the connection before it initialized (did it exit?)`
              : `${what} could not be reached: ${oneLine(text)}`
      return { reason: "unavailable", detail: said() === "" ? detail : `${detail}.${said()}` }
    }

    const first = yield* Effect.tryPromise({ try: connect, catch: startFailure })
    const listed: Array<ListedTool> = []
    yield* Effect.tryPromise({
      try: async () => {
        let cursor: string | undefined
        do {
          const page = await first.client.listTools(cursor === undefined ? {} : { cursor }, {
            timeout: options.startMillis
          })
          listed.push(...(page.tools as ReadonlyArray<ListedTool>))
          cursor = page.nextCursor
          if (listed.length > 10_000) throw new Error("it lists more than 10,000 tools")
        } while (cursor !== undefined)
      },
      catch: (e): Failure =>
        isSchemaError(e)
          ? { reason: "protocol", detail: `its tool list is not valid MCP: ${oneLine(messageOf(e), 300)}` }
          : startFailure(e)
    }).pipe(Effect.onError(() => Effect.promise(() => first.client.close().catch(() => undefined))))

    const info = first.client.getServerVersion()
    let live: Connection | undefined = first
    let failures = 0
    let retryAt = 0
    const lock = yield* Semaphore.make(1)

    /** The live connection, made again if the last one closed (at once the first time, then with back-off). */
    const ensure: Effect.Effect<Connection, Failure> = lock.withPermit(
      Effect.gen(function* () {
        if (live !== undefined && !live.closed && alive(live)) return live
        const closed = live
        live = undefined
        if (closed !== undefined) yield* Effect.promise(() => closed.client.close().catch(() => undefined))
        const now = yield* Clock.currentTimeMillis
        if (now < retryAt) {
          return yield* Effect.fail<Failure>({
            reason: "unavailable",
            detail: `is restarting: the last attempt failed, the next is in ${Math.ceil((retryAt - now) / 1000)} s.${said()}`
          })
        }
        const made = yield* Effect.tryPromise({
          try: connect,
          catch: (e): Failure => ({
            reason: "unavailable",
            detail: `could not be started again: ${startFailure(e).detail}`
          })
        }).pipe(
          Effect.tapError(() =>
            Effect.flatMap(Clock.currentTimeMillis, (at) =>
              Effect.sync(() => {
                failures++
                retryAt = at + backoffMillis(failures)
              })
            )
          )
        )
        failures = 0
        live = made
        return made
      })
    )

    const callFailure = (connection: Connection, e: unknown): Failure => {
      const text = messageOf(e)
      if (text.includes(tooLargeMarker) || connection.overflowed) {
        // The SDK drops a connection whose answer overflows: the next call starts afresh.
        connection.closed = true
        return { reason: "too-large", detail: `answered with more than ${options.maxResultBytes} bytes` }
      }
      if (e instanceof mcp.McpError) {
        if (e.code === -32000 || connection.closed) {
          connection.closed = true
          return {
            reason: "unavailable",
            detail: `closed the connection during the call (it exited or was stopped); the next call starts it again.${said()}`
          }
        }
        if (e.code === -32001) return { reason: "unavailable", detail: "did not answer in time" }
        return { reason: "tool", detail: oneLine(e.message, 2000) }
      }
      if (isSchemaError(e)) {
        return {
          reason: "protocol",
          detail: `answered with something that is not a tool result: ${oneLine(text, 300)}`
        }
      }
      // Anything else is the transport's: the connection is not trusted again.
      connection.closed = true
      return {
        reason: "unavailable",
        detail: `could not be called: ${oneLine(text)}; the next call connects again.${said()}`
      }
    }

    const call = (
      name: string,
      args: Readonly<Record<string, unknown>>,
      progress?: (report: {
        readonly progress: number
        readonly total?: number | undefined
        readonly message?: string | undefined
      }) => void
    ): Effect.Effect<Result, Failure> =>
      Effect.flatMap(ensure, (connection) =>
        Effect.tryPromise({
          // The signal cancels the call on the server when the caller's call is interrupted (cancelled, timed out).
          try: async (signal) => {
            const token = progress === undefined ? undefined : `ugent-${++nextToken}`
            if (token !== undefined) listeners.set(token, progress!)
            try {
              return await connection.client.callTool(
                { name, arguments: { ...args }, ...(token === undefined ? {} : { _meta: { progressToken: token } }) },
                undefined,
                { signal, timeout: noTimeout }
              )
            } finally {
              if (token !== undefined) listeners.delete(token)
            }
          },
          catch: (e) => callFailure(connection, e)
        }).pipe(
          Effect.flatMap((result) => {
            const content = (Array.isArray(result.content) ? result.content : []) as ReadonlyArray<
              Record<string, unknown>
            >
            if (result.isError === true) {
              const text = content
                .map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : `[${part.type}]`))
                .join("\n")
              return Effect.fail<Failure>({ reason: "tool", detail: oneLine(text === "" ? "(no text)" : text, 2000) })
            }
            const structured = result.structuredContent as Record<string, unknown> | undefined
            return Effect.succeed<Result>(
              structured === undefined ? { content } : { content, structuredContent: structured }
            )
          })
        )
      )

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        await live?.client.close().catch(() => undefined)
        live = undefined
      })
    )

    return {
      server: { name: info?.name ?? "unknown", version: info?.version ?? "unknown" },
      tools: listed,
      call,
      pid: () => (live === undefined || live.closed ? undefined : live.pid())
    } satisfies Link
  })
