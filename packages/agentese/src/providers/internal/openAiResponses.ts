/**
 * The OpenAI Responses API wire format (`POST /responses`): the request we
 * send (input items, flat function tools, a JSON Schema text format), the
 * schemas of the answer and of the streamed events we read, and their
 * translation to and from `effect/ai`'s prompt and response parts. Events
 * we do not use (annotations, audio, provider-run tools) are skipped without
 * being decoded.
 *
 * @internal
 */
import { Effect, type JsonSchema, Schema, Stream } from "effect"
import type { AiError, LanguageModel, Prompt, Response } from "effect/ai"
import type { Sse } from "effect/encoding"
import * as Http from "./http.ts"
import * as Tools from "./tools.ts"

// ---------------------------------------------------------------------------------------------------------------------
// The request (checked against the openai SDK's `ResponseCreateParams` in test/types)
// ---------------------------------------------------------------------------------------------------------------------

/** A content part of a user message. */
export type InputContent =
  | { type: "input_text"; text: string }
  | { type: "input_image"; image_url: string; detail: "auto" }
  | { type: "input_file"; file_data?: string; file_url?: string; filename?: string }

/** An item of the input: a message, a function call the model made, or a call's output. */
export type InputItem =
  | { role: "system" | "user"; content: string | Array<InputContent> }
  | { role: "assistant"; content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string }

/** A function the model may call (the flat shape). */
export interface FunctionTool {
  type: "function"
  name: string
  description?: string
  parameters: JsonSchema.JsonSchema
  strict: boolean
}

/** Which tool the model must, may or must not call. */
export type ToolChoice = "auto" | "none" | "required" | { type: "function"; name: string }

/** The body of `POST /responses`. */
export interface Request {
  model: string
  input: Array<InputItem>
  tools?: Array<FunctionTool>
  tool_choice?: ToolChoice
  text?: { format: { type: "json_schema"; name: string; schema: JsonSchema.JsonSchema; strict: boolean } }
  max_output_tokens?: number
  temperature?: number
  store?: boolean
  stream?: boolean
}

// ---------------------------------------------------------------------------------------------------------------------
// The answer (the openai SDK's `Response` and stream event types must be assignable to these, see test/types)
// ---------------------------------------------------------------------------------------------------------------------

const OptionalString = Schema.optionalKey(Schema.String)

/** Token counts. */
export const Usage = Schema.Struct({
  input_tokens: Schema.Number,
  input_tokens_details: Schema.optionalKey(
    Schema.NullOr(Schema.Struct({ cached_tokens: Schema.optionalKey(Schema.Number) }))
  ),
  output_tokens: Schema.Number,
  output_tokens_details: Schema.optionalKey(
    Schema.NullOr(Schema.Struct({ reasoning_tokens: Schema.optionalKey(Schema.Number) }))
  )
})

/** An output message: output text and refusals. */
export const MessageItem = Schema.Struct({
  type: Schema.Literal("message"),
  id: Schema.String,
  content: Schema.Array(Schema.Struct({ type: Schema.String, text: OptionalString, refusal: OptionalString }))
})

/** A function call the model made; the call goes by its `call_id`. */
export const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  id: OptionalString,
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})

/** Reasoning, with its summary. */
export const ReasoningItem = Schema.Struct({
  type: Schema.Literal("reasoning"),
  id: Schema.String,
  summary: Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.String }))
})

/** An output item this provider uses; the other kinds (provider-run tools) are skipped unread. */
export type OutputItem = typeof MessageItem.Type | typeof FunctionCallItem.Type | typeof ReasoningItem.Type

const itemSchemas = { message: MessageItem, function_call: FunctionCallItem, reasoning: ReasoningItem } as const

/** Reads an output item of a kind this provider uses, or nothing for another kind. */
export const outputItem = (
  connection: Http.Connection,
  method: string,
  item: unknown
): Effect.Effect<OutputItem | undefined, AiError.AiError> => {
  const type = Tools.isRecord(item) ? item.type : undefined
  if (type !== "message" && type !== "function_call" && type !== "reasoning") return Effect.succeed(undefined)
  return Http.decodeValue(connection, method, itemSchemas[type] as Schema.Codec<OutputItem, unknown>, item)
}

/** The answer of `POST /responses`, and the `response` of its created, completed and failed events. */
export const ResponseObject = Schema.Struct({
  id: Schema.String,
  created_at: Schema.optionalKey(Schema.Number),
  model: OptionalString,
  status: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(
    Schema.NullOr(Schema.Struct({ code: Schema.optionalKey(Schema.NullOr(Schema.String)), message: Schema.String }))
  ),
  incomplete_details: Schema.optionalKey(
    Schema.NullOr(Schema.Struct({ reason: Schema.optionalKey(Schema.NullOr(Schema.String)) }))
  ),
  // Items are read one by one (outputItem), so a kind this provider does not know never fails the answer.
  output: Schema.Array(Schema.Unknown),
  usage: Schema.optionalKey(Schema.NullOr(Usage))
})

/** `response.created`, `response.completed`, `response.incomplete`, `response.failed`. */
export const ResponseEvent = Schema.Struct({ type: Schema.String, response: ResponseObject })

/** `response.output_item.added` and `response.output_item.done`. */
export const OutputItemEvent = Schema.Struct({ type: Schema.String, output_index: Schema.Number, item: Schema.Unknown })

/** A delta of an item: output text, a refusal, function call arguments, a reasoning summary. */
export const DeltaEvent = Schema.Struct({ type: Schema.String, item_id: Schema.String, delta: Schema.String })

/** `error`: the stream failed. */
export const ErrorEvent = Schema.Struct({
  type: Schema.Literal("error"),
  code: Schema.optionalKey(Schema.NullOr(Schema.String)),
  message: Schema.String
})

// ---------------------------------------------------------------------------------------------------------------------
// Prompt → request
// ---------------------------------------------------------------------------------------------------------------------

/** The settings of a Responses API model. */
export interface Settings {
  readonly model: string
  readonly strictTools: boolean
  readonly maxOutputTokens: number | undefined
  readonly temperature: number | undefined
  readonly store: boolean
}

const argumentsText = (params: unknown): string =>
  typeof params === "string" ? params : (JSON.stringify(params) ?? "{}")

const userContent = (
  connection: Http.Connection,
  method: string,
  parts: ReadonlyArray<Prompt.UserMessagePart>
): Effect.Effect<string | Array<InputContent>, AiError.AiError> =>
  Effect.gen(function* () {
    if (parts.every((p) => p.type === "text")) return parts.map((p) => (p as Prompt.TextPart).text).join("\n")
    const out: Array<InputContent> = []
    for (const part of parts) {
      if (part.type === "text") {
        out.push({ type: "input_text", text: part.text })
      } else if (part.mediaType.startsWith("image/")) {
        out.push({ type: "input_image", image_url: Tools.fileUrl(Tools.fileSource(part)), detail: "auto" })
      } else if (part.mediaType === "application/pdf") {
        const source = Tools.fileSource(part)
        const name = part.fileName === undefined ? {} : { filename: part.fileName }
        out.push(
          source._tag === "url"
            ? { type: "input_file", file_url: source.url, ...name }
            : { type: "input_file", file_data: Tools.fileUrl(source), ...name }
        )
      } else {
        return yield* Tools.unsupportedInput(
          connection,
          method,
          `the Responses API takes images and PDF files, not ${part.mediaType}`
        )
      }
    }
    return out
  })

/** The input items of a prompt. */
export const input = (
  connection: Http.Connection,
  method: string,
  prompt: Prompt.Prompt
): Effect.Effect<Array<InputItem>, AiError.AiError> =>
  Effect.gen(function* () {
    const out: Array<InputItem> = []
    for (const message of prompt.content) {
      switch (message.role) {
        case "system":
          out.push({ role: "system", content: message.content })
          break
        case "user":
          out.push({ role: "user", content: yield* userContent(connection, method, message.content) })
          break
        case "assistant": {
          let text = ""
          const flush = () => {
            if (text.length > 0) out.push({ role: "assistant", content: text })
            text = ""
          }
          for (const part of message.content) {
            if (part.type === "text") text += part.text
            else if (part.type === "tool-call" && !part.providerExecuted) {
              flush()
              out.push({
                type: "function_call",
                call_id: part.id,
                name: part.name,
                arguments: argumentsText(part.params)
              })
            } else if (part.type === "tool-result" && !part.providerExecuted) {
              flush()
              out.push({ type: "function_call_output", call_id: part.id, output: Tools.toolResultText(part) })
            }
          }
          flush()
          break
        }
        case "tool":
          for (const part of message.content) {
            if (part.type === "tool-result") {
              out.push({ type: "function_call_output", call_id: part.id, output: Tools.toolResultText(part) })
            }
          }
          break
      }
    }
    return out
  })

const toolChoice = (choice: LanguageModel.ToolChoice<string>): ToolChoice => {
  if (typeof choice === "string") return choice
  if ("tool" in choice) return { type: "function", name: choice.tool }
  return choice.mode === "required" ? "required" : "auto"
}

/** The request of a call, and how to read the model's tool arguments. */
export const request = (
  connection: Http.Connection,
  method: string,
  options: LanguageModel.ProviderOptions,
  settings: Settings
): Effect.Effect<{ readonly body: Request; readonly tools: Tools.PreparedTools }, AiError.AiError> =>
  Effect.gen(function* () {
    const tools = yield* Tools.prepareTools(connection, method, options.tools, settings.strictTools, "openai")
    const body: Request = {
      model: settings.model,
      input: yield* input(connection, method, options.prompt),
      store: settings.store
    }
    if (tools.definitions.length > 0) {
      body.tools = tools.definitions.map((d) => ({
        type: "function",
        name: d.name,
        ...(d.description === undefined ? {} : { description: d.description }),
        parameters: d.parameters,
        strict: d.strict
      }))
      body.tool_choice = toolChoice(options.toolChoice)
    }
    if (options.responseFormat.type === "json") {
      body.text = {
        format: {
          type: "json_schema",
          name: Tools.formatName(options.responseFormat.objectName),
          schema: yield* Tools.responseSchema(connection, method, options.responseFormat.schema, "openai"),
          strict: true
        }
      }
    }
    if (settings.maxOutputTokens !== undefined) body.max_output_tokens = settings.maxOutputTokens
    if (settings.temperature !== undefined) body.temperature = settings.temperature
    return { body, tools }
  })

// ---------------------------------------------------------------------------------------------------------------------
// Answer → response parts
// ---------------------------------------------------------------------------------------------------------------------

type ResponseObject = typeof ResponseObject.Type

/** The finish reason of a response's status; a completed response with function calls finished for them. */
export const finishReason = (
  response: ResponseObject,
  hasToolCalls: boolean,
  refused: boolean
): Response.FinishReason => {
  if (refused) return "content-filter"
  switch (response.status) {
    case "completed":
      return hasToolCalls ? "tool-calls" : "stop"
    case "incomplete": {
      const reason = response.incomplete_details?.reason
      return reason === "max_output_tokens" ? "length" : reason === "content_filter" ? "content-filter" : "other"
    }
    case "failed":
      return "error"
    default:
      return hasToolCalls ? "tool-calls" : "other"
  }
}

const usageOf = (u: typeof Usage.Type | null | undefined): Response.FinishPartEncoded["usage"] =>
  Tools.usage({
    inputTotal: u?.input_tokens,
    cacheRead: u?.input_tokens_details?.cached_tokens,
    outputTotal: u?.output_tokens,
    reasoning: u?.output_tokens_details?.reasoning_tokens
  })

const metadataPart = (response: ResponseObject): Response.ResponseMetadataPartEncoded => {
  const timestamp = Tools.isoOfSeconds(response.created_at)
  return {
    type: "response-metadata",
    id: response.id,
    ...(response.model === undefined ? {} : { modelId: response.model }),
    ...(timestamp === undefined ? {} : { timestamp })
  }
}

/** A response whose status is `failed` (a 200 answer, or a `response.failed` event). */
export const failed = (connection: Http.Connection, method: string, response: ResponseObject): AiError.AiError =>
  Http.streamError(connection, method, {
    message: response.error?.message ?? "the response failed",
    type: undefined,
    code: response.error?.code ?? undefined
  })

const reasoningText = (item: typeof ReasoningItem.Type): string => item.summary.map((s) => s.text).join("\n\n")

/** The response parts of an answer. */
export const parts = (
  connection: Http.Connection,
  method: string,
  response: ResponseObject,
  tools: Tools.PreparedTools
): Effect.Effect<Array<Response.PartEncoded>, AiError.AiError> =>
  Effect.gen(function* () {
    if (response.status === "failed") return yield* Effect.fail(failed(connection, method, response))
    const out: Array<Response.PartEncoded> = [metadataPart(response)]
    let toolCalls = 0
    let refused = false
    for (const raw of response.output) {
      const item = yield* outputItem(connection, method, raw)
      if (item === undefined) continue
      switch (item.type) {
        case "message":
          for (const content of item.content) {
            if (content.type === "output_text" && content.text !== undefined && content.text.length > 0) {
              out.push({ type: "text", text: content.text })
            } else if (content.type === "refusal" && content.refusal !== undefined) {
              refused = true
              out.push({ type: "text", text: content.refusal, metadata: { openai: { refusal: true } } })
            }
          }
          break
        case "function_call":
          toolCalls++
          out.push({
            type: "tool-call",
            id: item.call_id,
            name: item.name,
            params: tools.argumentsOf(item.name, item.arguments),
            ...(item.id === undefined ? {} : { metadata: { openai: { itemId: item.id } } })
          })
          break
        case "reasoning": {
          const text = reasoningText(item)
          if (text.length > 0) out.push({ type: "reasoning", text })
          break
        }
      }
    }
    out.push({ type: "finish", reason: finishReason(response, toolCalls > 0, refused), usage: usageOf(response.usage) })
    return out
  })

/**
 * The stream parts of a streamed answer: a text, reasoning or function-call
 * item starts when it is added, grows by its deltas, and ends when it is
 * done (a function call then becomes a tool call with the item's complete
 * arguments); `response.completed` or `response.incomplete` finish it.
 */
export const streamParts = (
  connection: Http.Connection,
  method: string,
  events: Stream.Stream<Sse.Event, AiError.AiError>,
  tools: Tools.PreparedTools
): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> =>
  Stream.suspend(() => {
    let done = false
    let toolCalls = 0
    let refused = false
    // Function call items stream under their item id; the call goes by its call id.
    const callIds = new Map<string, { readonly callId: string; readonly name: string }>()
    const open = new Map<string, "text" | "reasoning">()

    const decode = <S extends Schema.Codec<unknown, unknown>>(schema: S, json: unknown) =>
      Http.decodeValue(connection, method, schema, json)

    const itemOf = (json: unknown) =>
      Effect.flatMap(decode(OutputItemEvent, json), (e) => outputItem(connection, method, e.item))

    const start = (kind: "text" | "reasoning", id: string): Array<Response.StreamPartEncoded> => {
      if (open.has(id)) return []
      open.set(id, kind)
      return [{ type: kind === "text" ? "text-start" : "reasoning-start", id }]
    }

    const onEvent = (event: Sse.Event): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.AiError> =>
      done
        ? Effect.succeed([])
        : Effect.flatMap(
            Http.eventJson(connection, method, event),
            (json): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.AiError> => {
              const type = Tools.isRecord(json) && typeof json.type === "string" ? json.type : event.event
              switch (type) {
                case "response.created":
                  return Effect.map(decode(ResponseEvent, json), (e) => [metadataPart(e.response)])
                case "response.output_item.added":
                  return Effect.map(itemOf(json), (item): Array<Response.StreamPartEncoded> => {
                    if (item === undefined) return []
                    if (item.type === "message") return start("text", item.id)
                    if (item.type === "reasoning") return start("reasoning", item.id)
                    if (item.id !== undefined) callIds.set(item.id, { callId: item.call_id, name: item.name })
                    return [{ type: "tool-params-start", id: item.call_id, name: item.name }]
                  })
                case "response.output_text.delta":
                case "response.refusal.delta":
                  return Effect.map(decode(DeltaEvent, json), (e) => {
                    if (type === "response.refusal.delta") refused = true
                    return [...start("text", e.item_id), { type: "text-delta", id: e.item_id, delta: e.delta }]
                  })
                case "response.reasoning_summary_text.delta":
                case "response.reasoning_text.delta":
                  return Effect.map(decode(DeltaEvent, json), (e) => [
                    ...start("reasoning", e.item_id),
                    { type: "reasoning-delta", id: e.item_id, delta: e.delta }
                  ])
                case "response.function_call_arguments.delta":
                  return Effect.map(decode(DeltaEvent, json), (e): Array<Response.StreamPartEncoded> => {
                    const call = callIds.get(e.item_id)
                    return call === undefined ? [] : [{ type: "tool-params-delta", id: call.callId, delta: e.delta }]
                  })
                case "response.output_item.done":
                  return Effect.map(itemOf(json), (item): Array<Response.StreamPartEncoded> => {
                    if (item === undefined) return []
                    if (item.type === "message" || item.type === "reasoning") {
                      if (!open.delete(item.id)) return []
                      return [{ type: item.type === "message" ? "text-end" : "reasoning-end", id: item.id }]
                    }
                    toolCalls++
                    return [
                      { type: "tool-params-end", id: item.call_id },
                      {
                        type: "tool-call",
                        id: item.call_id,
                        name: item.name,
                        params: tools.argumentsOf(item.name, item.arguments),
                        ...(item.id === undefined ? {} : { metadata: { openai: { itemId: item.id } } })
                      }
                    ]
                  })
                case "response.completed":
                case "response.incomplete":
                  return Effect.map(decode(ResponseEvent, json), ({ response }): Array<Response.StreamPartEncoded> => {
                    done = true
                    const ends = [...open].map(
                      ([id, kind]): Response.StreamPartEncoded => ({
                        type: kind === "text" ? "text-end" : "reasoning-end",
                        id
                      })
                    )
                    open.clear()
                    return [
                      ...ends,
                      {
                        type: "finish",
                        reason: finishReason(response, toolCalls > 0, refused),
                        usage: usageOf(response.usage)
                      }
                    ]
                  })
                case "response.failed":
                  return Effect.flatMap(decode(ResponseEvent, json), ({ response }) =>
                    Effect.fail(failed(connection, method, response))
                  )
                case "error":
                  return Effect.flatMap(decode(ErrorEvent, json), (e) =>
                    Effect.fail(
                      Http.streamError(connection, method, {
                        message: e.message,
                        type: undefined,
                        code: e.code ?? undefined
                      })
                    )
                  )
                default:
                  return Effect.succeed([])
              }
            }
          )

    const end = Stream.suspend(() => (done ? Stream.empty : Stream.fail(Http.truncated(connection, method))))
    return events.pipe(Stream.mapEffect(onEvent), Stream.flattenIterable, Stream.concat(end))
  })
