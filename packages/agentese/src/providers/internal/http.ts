/**
 * The HTTP side every model provider shares: requests to a base URL with the
 * provider's headers, statuses mapped to `effect/ai`'s `AiError` reasons with
 * messages that say what to do, retries of 429 and 5xx answers that honour
 * `Retry-After`, Server-Sent Events, and the scrubbing that keeps an API key
 * out of every message.
 *
 * @internal
 */
import { Clock, Duration, Effect, Option, Predicate, Redacted, Result, Schedule, Schema, Stream } from "effect"
import { AiError } from "effect/ai"
import { Sse } from "effect/encoding"
import { Headers, HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"

/** How failed calls are tried again. */
export interface RetryOptions {
  /** How many times a failed call is sent again (default 4, so at most 5 attempts); 0 never retries. */
  readonly times?: number | undefined
  /** The first delay (default 500 ms); each next one is twice as long, scaled by a random factor in [0.8, 1.2]. */
  readonly base?: Duration.Input | undefined
  /** The longest backoff between two attempts (default 10 s). */
  readonly cap?: Duration.Input | undefined
  /**
   * The longest `Retry-After` the provider may ask for (default 60 s): a
   * shorter one is waited out (it raises the backoff), a longer one ends the
   * retries with the `RateLimitError` that carries it.
   */
  readonly maxRetryAfter?: Duration.Input | undefined
}

/** A provider endpoint: where requests go, with which headers, and how its failures are told. */
export interface Connection {
  /** The `module` of the `AiError`s: `"OpenAiChat"`, `"OpenAiResponses"`, `"Anthropic"`. */
  readonly module: string
  /** The provider as a message names it: `"OpenAI"`, `"Anthropic"`, `"the model server at http://…"`. */
  readonly provider: string
  /** The key under which provider metadata is recorded: `"openai"`, `"anthropic"`. */
  readonly metadataKey: string
  readonly baseUrl: string
  readonly headers: Readonly<Record<string, string>>
  readonly apiKey: Redacted.Redacted<string> | undefined
  /** The environment variable a message tells the user to set for the key. */
  readonly keyVariable: string
  readonly retry: RetryOptions | false
}

/** The options every connection takes. */
export interface ConnectionOptions {
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  readonly baseUrl?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly keyVariable?: string | undefined
  readonly providerName?: string | undefined
  readonly retry?: RetryOptions | false | undefined
}

/** OpenAI's own base URL. */
export const openAiBaseUrl = "https://api.openai.com/v1"

/** The connection of an OpenAI-style API: a bearer key, OpenAI's URL by default. */
export const openAiConnection = (module: string, options: ConnectionOptions): Connection => {
  const baseUrl = options.baseUrl ?? openAiBaseUrl
  const apiKey = typeof options.apiKey === "string" ? Redacted.make(options.apiKey) : options.apiKey
  return {
    module,
    provider:
      options.providerName ?? (hostOf(baseUrl) === "api.openai.com" ? "OpenAI" : `the model server at ${baseUrl}`),
    metadataKey: "openai",
    baseUrl,
    headers: {
      ...options.headers,
      ...(apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(apiKey)}` })
    },
    apiKey,
    keyVariable: options.keyVariable ?? "OPENAI_API_KEY",
    retry: options.retry ?? {}
  }
}

/** Anthropic's own base URL (requests go to `<base>/v1/...`). */
export const anthropicBaseUrl = "https://api.anthropic.com"

/** The API version every Anthropic request names. */
export const anthropicVersion = "2023-06-01"

/** The connection of the Anthropic API: `x-api-key` and `anthropic-version` headers. */
export const anthropicConnection = (options: ConnectionOptions): Connection => {
  const baseUrl = options.baseUrl ?? anthropicBaseUrl
  const apiKey = typeof options.apiKey === "string" ? Redacted.make(options.apiKey) : options.apiKey
  return {
    module: "Anthropic",
    provider:
      options.providerName ??
      (hostOf(baseUrl) === "api.anthropic.com" ? "Anthropic" : `the Anthropic API at ${baseUrl}`),
    metadataKey: "anthropic",
    baseUrl,
    headers: {
      ...options.headers,
      "anthropic-version": anthropicVersion,
      ...(apiKey === undefined ? {} : { "x-api-key": Redacted.value(apiKey) })
    },
    apiKey,
    keyVariable: options.keyVariable ?? "ANTHROPIC_API_KEY",
    retry: options.retry ?? {}
  }
}

const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url).hostname
  } catch {
    return undefined
  }
}

/** The provider at the start of a sentence. */
export const subject = (connection: Connection): string =>
  connection.provider.charAt(0).toUpperCase() + connection.provider.slice(1)

/** The provider and where it is: `OpenAI at https://api.openai.com/v1`, `the model server at http://…`. */
export const place = (connection: Connection): string =>
  connection.provider.includes(connection.baseUrl)
    ? connection.provider
    : `${connection.provider} at ${connection.baseUrl}`

/** Joins a base URL and a path with exactly one slash between them. */
export const joinUrl = (baseUrl: string, path: string): string =>
  `${baseUrl.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`

const keyLike = /\b(?:sk|key|pk|rk)-[A-Za-z0-9_*.-]{6,}/g

/** Removes the API key, and anything shaped like one, from a text a provider sent back. */
export const scrub = (text: string, apiKey: Redacted.Redacted<string> | undefined): string => {
  let out = text
  if (apiKey !== undefined) {
    const key = Redacted.value(apiKey)
    if (key.length >= 4) out = out.split(key).join("[redacted]")
  }
  return out.replace(keyLike, "[redacted]")
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim()

/** Builds a request to a path under the connection's base URL, with its headers. */
export const request = (
  connection: Connection,
  method: "GET" | "POST",
  path: string,
  body?: unknown
): HttpClientRequest.HttpClientRequest => {
  const base =
    method === "GET"
      ? HttpClientRequest.get(joinUrl(connection.baseUrl, path))
      : HttpClientRequest.post(joinUrl(connection.baseUrl, path))
  const withHeaders = HttpClientRequest.setHeaders(base, connection.headers)
  return body === undefined ? withHeaders : HttpClientRequest.bodyJsonUnsafe(withHeaders, body)
}

const statusText: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  409: "Conflict",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  529: "Overloaded"
}

/** `404 Not Found`. */
export const describeStatus = (status: number): string =>
  statusText[status] === undefined ? `${status}` : `${status} ${statusText[status]}`

/** What a provider says in an error body: OpenAI and Anthropic `{ error: { message, type, code } }`, or `{ error: "…" }`. */
export interface ProviderError {
  readonly message: string | undefined
  readonly type: string | undefined
  readonly code: string | undefined
}

const str = (u: unknown): string | undefined => (typeof u === "string" && u.length > 0 ? u : undefined)

/** Reads the error fields out of a provider's error body, whatever its dialect. */
export const providerError = (body: string): ProviderError => {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return { message: str(body.trim().slice(0, 500)), type: undefined, code: undefined }
  }
  const error = Predicate.hasProperty(json, "error") ? json.error : json
  if (typeof error === "string") return { message: str(error), type: undefined, code: undefined }
  if (!Predicate.isObject(error)) return { message: undefined, type: undefined, code: undefined }
  const e = error as Record<string, unknown>
  return {
    message: str(e.message),
    type: str(e.type),
    code: typeof e.code === "number" ? `${e.code}` : str(e.code)
  }
}

const retryAfterOf = (headers: Headers.Headers, nowMillis: number): Duration.Duration | undefined => {
  const millis = Number(headers["retry-after-ms"])
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(millis) && millis >= 0) return Duration.millis(millis)
  const value = headers["retry-after"]
  if (value === undefined) return undefined
  const parsed = Headers.parseRetryAfter(value)
  return Result.isSuccess(parsed) ? Headers.retryAfterDelay(parsed.success, nowMillis) : undefined
}

/**
 * The `AiError` reason of a failed answer, with a message that names the
 * provider, the status and what to do.
 */
export const reasonOfStatus = (
  connection: Connection,
  status: number,
  body: string,
  retryAfter: Duration.Duration | undefined,
  requestId: string | undefined
): AiError.AiErrorReason => {
  const error = providerError(body)
  const said = error.message === undefined ? "" : ` (${oneLine(scrub(error.message, connection.apiKey))})`
  const metadata = {
    [connection.metadataKey]: {
      status,
      ...(error.type === undefined ? {} : { errorType: error.type }),
      ...(error.code === undefined ? {} : { errorCode: error.code }),
      ...(requestId === undefined ? {} : { requestId })
    }
  }
  const http = { body: scrub(body.slice(0, 2000), connection.apiKey) }
  const answered = `${subject(connection)} answered ${describeStatus(status)}${said}`
  if (status === 401) {
    const missing = connection.apiKey === undefined
    return new AiError.AuthenticationError({
      kind: missing ? "MissingKey" : "InvalidKey",
      description: missing
        ? `${answered}: set ${connection.keyVariable} to your API key`
        : `${answered}: set ${connection.keyVariable} to a valid API key`,
      metadata,
      http
    })
  }
  if (status === 403) {
    return new AiError.AuthenticationError({
      kind: "InsufficientPermissions",
      description: `${answered}: check that the key in ${connection.keyVariable} may use this model`,
      metadata,
      http
    })
  }
  if (status === 429) {
    if (error.code === "insufficient_quota" || error.type === "insufficient_quota") {
      return new AiError.QuotaExhaustedError({ metadata, http })
    }
    return new AiError.RateLimitError({ ...(retryAfter === undefined ? {} : { retryAfter }), metadata, http })
  }
  if (status === 408 || status >= 500) {
    return new AiError.InternalProviderError({ description: `${answered}; try again later`, metadata, http })
  }
  if (status >= 400 && status < 500) {
    const hint = status === 404 ? ": check the model name and the base URL" : ""
    return new AiError.InvalidRequestError({ description: `${answered}${hint}`, metadata, http })
  }
  return new AiError.UnknownError({ description: answered, metadata, http })
}

/** The cause of a transport failure in a few words: `ECONNREFUSED`, `ENOTFOUND`, `bad port`. */
export const transportDetail = (cause: unknown): string => {
  let current: unknown = cause
  let message: string | undefined
  for (let depth = 0; depth < 5 && Predicate.isObject(current); depth++) {
    const c = current as { readonly code?: unknown; readonly message?: unknown; readonly cause?: unknown }
    if (typeof c.code === "string") return c.code
    if (typeof c.message === "string" && c.message !== "fetch failed") message = c.message
    current = c.cause
  }
  return message ?? "no answer"
}

const networkError = (connection: Connection, error: HttpClientError.HttpClientError): AiError.AiErrorReason => {
  const reason = error.reason
  const url = "request" in reason ? reason.request.url : connection.baseUrl
  const method = "request" in reason ? reason.request.method : "POST"
  const tag = reason._tag === "EncodeError" || reason._tag === "InvalidUrlError" ? reason._tag : "TransportError"
  return new AiError.NetworkError({
    reason: tag,
    method,
    url,
    description: `Cannot reach ${place(connection)} (${scrub(transportDetail(reason.cause ?? reason), connection.apiKey)})`
  })
}

const aiError = (connection: Connection, method: string, reason: AiError.AiErrorReason): AiError.AiError =>
  AiError.make({ module: connection.module, method, reason })

/**
 * The retry policy as a `Schedule` fed with the errors: jittered exponential
 * backoff capped at `cap`, raised to a `Retry-After` the provider asked for,
 * for `times` retries, while the error is retryable (429, 408, 5xx, a lost
 * connection) and its `Retry-After` is not longer than `maxRetryAfter`.
 */
export const retrySchedule = (options: RetryOptions): Schedule.Schedule<Duration.Duration, AiError.AiError> => {
  const cap = Duration.fromInputUnsafe(options.cap ?? "10 seconds")
  const maxRetryAfter = Duration.fromInputUnsafe(options.maxRetryAfter ?? "60 seconds")
  return Schedule.min([
    Schedule.jittered(Schedule.exponential(options.base ?? "500 millis")),
    Schedule.spaced(cap)
  ]).pipe(
    Schedule.setInputType<AiError.AiError>(),
    Schedule.modifyDelay(({ input, duration }) => {
      const retryAfter = input.retryAfter
      return Effect.succeed(retryAfter === undefined ? duration : Duration.max(duration, retryAfter))
    }),
    Schedule.upTo({ times: options.times ?? 4 }),
    Schedule.while(({ input }) => {
      const retryAfter = input.retryAfter
      return input.isRetryable && (retryAfter === undefined || Duration.isLessThanOrEqualTo(retryAfter, maxRetryAfter))
    })
  )
}

/**
 * Sends a request and succeeds with a 2xx response; any other status, and a
 * request that never reached the provider, fail with an `AiError` whose
 * message says what to do. Retryable failures are retried by the
 * connection's policy.
 */
export const send = (
  client: HttpClient.HttpClient,
  connection: Connection,
  method: string,
  req: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, AiError.AiError> => {
  const once = client.execute(req).pipe(
    Effect.mapError((error) => aiError(connection, method, networkError(connection, error))),
    Effect.flatMap((response) =>
      response.status >= 200 && response.status < 300
        ? Effect.succeed(response)
        : Effect.gen(function* () {
            const body = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
            const now = yield* Clock.currentTimeMillis
            const requestId = response.headers["x-request-id"] ?? response.headers["request-id"]
            return yield* Effect.fail(
              aiError(
                connection,
                method,
                reasonOfStatus(connection, response.status, body, retryAfterOf(response.headers, now), requestId)
              )
            )
          })
    )
  )
  return connection.retry === false ? once : Effect.retry(once, retrySchedule(connection.retry))
}

/** Reads a 2xx response as JSON, decoded by a schema; a body that does not fit is an `InvalidResponseError`. */
export const decodeJson = <S extends Schema.Codec<unknown, unknown>>(
  connection: Connection,
  method: string,
  response: HttpClientResponse.HttpClientResponse,
  schema: S
): Effect.Effect<S["Type"], AiError.AiError> =>
  response.text.pipe(
    Effect.mapError((error) => aiError(connection, method, networkError(connection, error))),
    Effect.flatMap((text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () =>
          aiError(
            connection,
            method,
            new AiError.InvalidResponseError({
              description: `${subject(connection)} sent a body that is not JSON: ${scrub(oneLine(text.slice(0, 200)), connection.apiKey)}`
            })
          )
      })
    ),
    Effect.flatMap((json) => decodeValue(connection, method, schema, json))
  )

/** Decodes a value a provider sent; one that does not fit is an `InvalidResponseError`. */
export const decodeValue = <S extends Schema.Codec<unknown, unknown>>(
  connection: Connection,
  method: string,
  schema: S,
  value: unknown
): Effect.Effect<S["Type"], AiError.AiError> =>
  Schema.decodeUnknownEffect(schema)(value).pipe(
    Effect.mapError((error) =>
      aiError(
        connection,
        method,
        new AiError.InvalidResponseError({
          description: `${subject(connection)} sent an answer of an unexpected shape: ${oneLine(error.message)}`
        })
      )
    )
  )

/**
 * The Server-Sent Events of a streamed response. A `retry:` directive is
 * ignored (the call is not reconnected); an event larger than 10 MiB fails.
 */
export const sse = (
  connection: Connection,
  method: string,
  response: HttpClientResponse.HttpClientResponse
): Stream.Stream<Sse.Event, AiError.AiError> =>
  Stream.suspend(() => {
    let events: Array<Sse.Event> = []
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Event") events.push(event)
    })
    return response.stream.pipe(
      Stream.mapError((error) => aiError(connection, method, networkError(connection, error))),
      Stream.decodeText(),
      Stream.mapEffect((chunk) => {
        const error = parser.feed(chunk)
        if (error !== undefined) {
          return Effect.fail(
            aiError(
              connection,
              method,
              new AiError.InvalidResponseError({
                description: `${subject(connection)} sent an event too large to read`
              })
            )
          )
        }
        const out = events
        events = []
        return Effect.succeed(out)
      }),
      Stream.flattenIterable
    )
  })

/** Parses the JSON data of an event; data that is not JSON is an `InvalidResponseError`. */
export const eventJson = (
  connection: Connection,
  method: string,
  event: Sse.Event
): Effect.Effect<unknown, AiError.AiError> =>
  Effect.try({
    try: () => JSON.parse(event.data) as unknown,
    catch: () =>
      aiError(
        connection,
        method,
        new AiError.InvalidResponseError({
          description: `${subject(connection)} streamed an event that is not JSON: ${scrub(oneLine(event.data.slice(0, 200)), connection.apiKey)}`
        })
      )
  })

/**
 * The `AiError` of an error a provider reports inside a stream (`event:
 * error`, or a chunk with an `error` field), from its type or code.
 */
export const streamError = (connection: Connection, method: string, error: ProviderError): AiError.AiError => {
  const said = error.message === undefined ? "" : `: ${oneLine(scrub(error.message, connection.apiKey))}`
  const kind = `${error.type ?? ""} ${error.code ?? ""}`
  const description = `${subject(connection)} reported ${error.type ?? error.code ?? "an error"} while streaming${said}`
  const reason: AiError.AiErrorReason = /rate_limit/.test(kind)
    ? new AiError.RateLimitError({})
    : /overloaded|api_error|server_error|internal/.test(kind)
      ? new AiError.InternalProviderError({ description })
      : /authentication|permission/.test(kind)
        ? new AiError.AuthenticationError({ kind: "Unknown", description })
        : /invalid_request|invalid_prompt/.test(kind)
          ? new AiError.InvalidRequestError({ description })
          : new AiError.UnknownError({ description })
  return aiError(connection, method, reason)
}

/** A stream that ended before the provider said it finished. */
export const truncated = (connection: Connection, method: string): AiError.AiError =>
  aiError(
    connection,
    method,
    new AiError.InvalidResponseError({
      description: `${subject(connection)} closed the stream before the answer was finished; try again`
    })
  )

/** The status of a cheap call (the models endpoint), for a preflight: no retries, a short timeout. */
export const probe = (
  client: HttpClient.HttpClient,
  connection: Connection,
  path: string,
  timeout: Duration.Input
): Effect.Effect<
  | { readonly _tag: "Answered"; readonly status: number; readonly body: string }
  | { readonly _tag: "Unreachable"; readonly detail: string }
> =>
  client.execute(request(connection, "GET", path)).pipe(
    Effect.flatMap((response) =>
      Effect.map(response.text.pipe(Effect.orElseSucceed(() => "")), (body) => ({
        _tag: "Answered" as const,
        status: response.status,
        body
      }))
    ),
    Effect.catch((error) =>
      Effect.succeed({ _tag: "Unreachable" as const, detail: transportDetail(error.reason.cause ?? error.reason) })
    ),
    Effect.timeoutOption(timeout),
    Effect.map(
      Option.getOrElse(() => ({
        _tag: "Unreachable" as const,
        detail: `no answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
      }))
    )
  )
