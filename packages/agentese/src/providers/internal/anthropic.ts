/**
 * The Anthropic Messages API wire format (`POST /v1/messages`): the request
 * we send (a top-level system prompt, alternating user and assistant turns
 * of content blocks, tool results in the user turn that follows the tool
 * uses), the schemas of the answer and of the streamed events, and their
 * translation to and from `effect/ai`'s prompt and response parts. Thinking
 * blocks keep their signature in the part metadata, so a conversation with
 * extended thinking can be sent back as the API requires.
 *
 * @internal
 */
import { Effect, type JsonSchema, Schema, Stream } from "effect"
import type { AiError, LanguageModel, Prompt, Response } from "effect/ai"
import type { Sse } from "effect/encoding"
import * as Http from "./http.ts"
import * as Tools from "./tools.ts"

// ---------------------------------------------------------------------------------------------------------------------
// The request (checked against the Anthropic SDK's `MessageCreateParams` in test/types)
// ---------------------------------------------------------------------------------------------------------------------

/** The image types the API takes. */
export type ImageMediaType = "image/jpeg" | "image/png" | "image/gif" | "image/webp"

const imageMediaTypes: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"])

/** A content block of a message. */
export type ContentBlock =
  | { type: "text"; text: string }
  | {
      type: "image"
      source: { type: "base64"; media_type: ImageMediaType; data: string } | { type: "url"; url: string }
    }
  | {
      type: "document"
      source: { type: "base64"; media_type: "application/pdf"; data: string } | { type: "url"; url: string }
      title?: string
    }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: boolean }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }

/** A turn of the conversation. */
export interface Message {
  role: "user" | "assistant"
  content: Array<ContentBlock>
}

/** A tool the model may use. */
export interface Tool {
  name: string
  description?: string
  input_schema: { type: "object" } & JsonSchema.JsonSchema
  strict?: boolean
}

/** Which tool the model must, may or must not use. */
export type ToolChoice = { type: "auto" } | { type: "any" } | { type: "none" } | { type: "tool"; name: string }

/** The body of `POST /v1/messages`. */
export interface Request {
  model: string
  max_tokens: number
  messages: Array<Message>
  system?: string
  tools?: Array<Tool>
  tool_choice?: ToolChoice
  output_config?: { format: { type: "json_schema"; schema: JsonSchema.JsonSchema } }
  thinking?: { type: "enabled"; budget_tokens: number }
  temperature?: number
  stream?: boolean
}

// ---------------------------------------------------------------------------------------------------------------------
// The answer (the Anthropic SDK's `Message` and stream event types must be assignable to these, see test/types)
// ---------------------------------------------------------------------------------------------------------------------

const OptionalString = Schema.optionalKey(Schema.String)
const NullableNumber = Schema.optionalKey(Schema.NullOr(Schema.Number))

/** Token counts (`input_tokens` excludes the cached ones). */
export const Usage = Schema.Struct({
  input_tokens: NullableNumber,
  output_tokens: Schema.optionalKey(Schema.Number),
  cache_creation_input_tokens: NullableNumber,
  cache_read_input_tokens: NullableNumber
})

/** A content block of an answer, read loosely: text, tool use, thinking, or a block this provider does not use. */
export const ContentBlockSchema = Schema.Struct({
  type: Schema.String,
  text: OptionalString,
  id: OptionalString,
  name: OptionalString,
  input: Schema.optionalKey(Schema.Unknown),
  thinking: OptionalString,
  signature: OptionalString,
  data: OptionalString
})

/** The answer of `POST /v1/messages`, and the `message` of a `message_start` event. */
export const MessageSchema = Schema.Struct({
  id: Schema.String,
  model: OptionalString,
  content: Schema.Array(ContentBlockSchema),
  stop_reason: Schema.optionalKey(Schema.NullOr(Schema.String)),
  usage: Schema.optionalKey(Usage)
})

/** `message_start`. */
export const MessageStart = Schema.Struct({ type: Schema.Literal("message_start"), message: MessageSchema })

/** `content_block_start`. */
export const BlockStart = Schema.Struct({
  type: Schema.Literal("content_block_start"),
  index: Schema.Number,
  content_block: ContentBlockSchema
})

/** `content_block_delta`: text, tool input JSON, thinking, or a thinking signature. */
export const BlockDelta = Schema.Struct({
  type: Schema.Literal("content_block_delta"),
  index: Schema.Number,
  delta: Schema.Struct({
    type: Schema.String,
    text: OptionalString,
    partial_json: OptionalString,
    thinking: OptionalString,
    signature: OptionalString
  })
})

/** `content_block_stop`. */
export const BlockStop = Schema.Struct({ type: Schema.Literal("content_block_stop"), index: Schema.Number })

/** `message_delta`: the stop reason and the final output token count. */
export const MessageDelta = Schema.Struct({
  type: Schema.Literal("message_delta"),
  delta: Schema.Struct({ stop_reason: Schema.optionalKey(Schema.NullOr(Schema.String)) }),
  usage: Schema.optionalKey(Usage)
})

/** `error`: the stream failed (an overloaded server, a rate limit). */
export const ErrorEvent = Schema.Struct({
  type: Schema.Literal("error"),
  error: Schema.Struct({ type: Schema.String, message: Schema.String })
})

// ---------------------------------------------------------------------------------------------------------------------
// Prompt → request
// ---------------------------------------------------------------------------------------------------------------------

/** The settings of a Messages API model. */
export interface Settings {
  readonly model: string
  readonly strictTools: boolean
  readonly maxOutputTokens: number
  readonly temperature: number | undefined
  readonly thinkingBudget: number | undefined
}

const inputOf = (params: unknown): unknown => (Tools.isRecord(params) ? params : {})

const anthropicOptions = (options: Prompt.ProviderOptions): Record<string, unknown> => {
  const value = options.anthropic
  return Tools.isRecord(value) ? value : {}
}

const userBlocks = (
  connection: Http.Connection,
  method: string,
  parts: ReadonlyArray<Prompt.UserMessagePart>
): Effect.Effect<Array<ContentBlock>, AiError.AiError> =>
  Effect.gen(function* () {
    const out: Array<ContentBlock> = []
    for (const part of parts) {
      if (part.type === "text") {
        if (part.text.length > 0) out.push({ type: "text", text: part.text })
        continue
      }
      const source = Tools.fileSource(part)
      if (imageMediaTypes.has(part.mediaType) || (source._tag === "base64" && imageMediaTypes.has(source.mediaType))) {
        out.push({
          type: "image",
          source:
            source._tag === "url"
              ? { type: "url", url: source.url }
              : { type: "base64", media_type: source.mediaType as ImageMediaType, data: source.data }
        })
      } else if (part.mediaType === "application/pdf") {
        out.push({
          type: "document",
          source:
            source._tag === "url"
              ? { type: "url", url: source.url }
              : { type: "base64", media_type: "application/pdf", data: source.data },
          ...(part.fileName === undefined ? {} : { title: part.fileName })
        })
      } else {
        return yield* Tools.unsupportedInput(
          connection,
          method,
          `the Messages API takes JPEG, PNG, GIF and WebP images and PDF files, not ${part.mediaType}`
        )
      }
    }
    return out
  })

const assistantBlocks = (
  parts: ReadonlyArray<Prompt.AssistantMessagePart>
): {
  readonly blocks: Array<ContentBlock>
  readonly results: Array<ContentBlock>
} => {
  const blocks: Array<ContentBlock> = []
  const results: Array<ContentBlock> = []
  for (const part of parts) {
    switch (part.type) {
      case "reasoning": {
        const { signature, redactedData } = anthropicOptions(part.options)
        if (typeof redactedData === "string") blocks.push({ type: "redacted_thinking", data: redactedData })
        else if (typeof signature === "string") blocks.push({ type: "thinking", thinking: part.text, signature })
        break
      }
      case "text":
        if (part.text.length > 0) blocks.push({ type: "text", text: part.text })
        break
      case "tool-call":
        if (!part.providerExecuted)
          blocks.push({ type: "tool_use", id: part.id, name: part.name, input: inputOf(part.params) })
        break
      case "tool-result":
        if (!part.providerExecuted) results.push(toolResult(part))
        break
    }
  }
  return { blocks, results }
}

const toolResult = (part: Prompt.ToolResultPart): ContentBlock => ({
  type: "tool_result",
  tool_use_id: part.id,
  content: Tools.toolResultText(part),
  ...(part.isFailure ? { is_error: true } : {})
})

/**
 * The system prompt and the turns of a prompt. Consecutive turns of one role
 * are merged (tool results and the user's next words share a user turn, the
 * results first, as the API requires), and empty turns are dropped.
 */
export const conversation = (
  connection: Http.Connection,
  method: string,
  prompt: Prompt.Prompt
): Effect.Effect<{ readonly system: string | undefined; readonly messages: Array<Message> }, AiError.AiError> =>
  Effect.gen(function* () {
    const system: Array<string> = []
    const turns: Array<Message> = []
    const add = (role: Message["role"], content: Array<ContentBlock>) => {
      if (content.length === 0) return
      const last = turns[turns.length - 1]
      if (last !== undefined && last.role === role) last.content.push(...content)
      else turns.push({ role, content: [...content] })
    }
    for (const message of prompt.content) {
      switch (message.role) {
        case "system":
          if (message.content.length > 0) system.push(message.content)
          break
        case "user":
          add("user", yield* userBlocks(connection, method, message.content))
          break
        case "assistant": {
          const { blocks, results } = assistantBlocks(message.content)
          add("assistant", blocks)
          add("user", results)
          break
        }
        case "tool":
          add(
            "user",
            message.content.flatMap((part) => (part.type === "tool-result" ? [toolResult(part)] : []))
          )
          break
      }
    }
    for (const turn of turns) {
      if (turn.role === "user") {
        turn.content.sort((a, b) => Number(b.type === "tool_result") - Number(a.type === "tool_result"))
      }
    }
    return { system: system.length > 0 ? system.join("\n\n") : undefined, messages: turns }
  })

const toolChoice = (choice: LanguageModel.ToolChoice<string>): ToolChoice => {
  if (choice === "auto") return { type: "auto" }
  if (choice === "none") return { type: "none" }
  if (choice === "required") return { type: "any" }
  if ("tool" in choice) return { type: "tool", name: choice.tool }
  return choice.mode === "required" ? { type: "any" } : { type: "auto" }
}

/** The request of a call, and how to read the model's tool inputs. */
export const request = (
  connection: Http.Connection,
  method: string,
  options: LanguageModel.ProviderOptions,
  settings: Settings
): Effect.Effect<{ readonly body: Request; readonly tools: Tools.PreparedTools }, AiError.AiError> =>
  Effect.gen(function* () {
    const tools = yield* Tools.prepareTools(connection, method, options.tools, settings.strictTools, "anthropic")
    const { system, messages } = yield* conversation(connection, method, options.prompt)
    const body: Request = { model: settings.model, max_tokens: settings.maxOutputTokens, messages }
    if (system !== undefined) body.system = system
    if (tools.definitions.length > 0) {
      body.tools = tools.definitions.map((d) => ({
        name: d.name,
        ...(d.description === undefined ? {} : { description: d.description }),
        input_schema: d.parameters,
        ...(d.strict ? { strict: true } : {})
      }))
      body.tool_choice = toolChoice(options.toolChoice)
    }
    if (options.responseFormat.type === "json") {
      body.output_config = {
        format: {
          type: "json_schema",
          schema: yield* Tools.responseSchema(connection, method, options.responseFormat.schema, "anthropic")
        }
      }
    }
    if (settings.thinkingBudget !== undefined)
      body.thinking = { type: "enabled", budget_tokens: settings.thinkingBudget }
    if (settings.temperature !== undefined) body.temperature = settings.temperature
    return { body, tools }
  })

// ---------------------------------------------------------------------------------------------------------------------
// Answer → response parts
// ---------------------------------------------------------------------------------------------------------------------

/** The finish reason of a stop reason. */
export const finishReason = (reason: string | null | undefined): Response.FinishReason => {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "tool_use":
      return "tool-calls"
    case "refusal":
      return "content-filter"
    case "pause_turn":
      return "pause"
    case null:
    case undefined:
      return "unknown"
    default:
      return "other"
  }
}

const usageOf = (u: typeof Usage.Type | undefined): Response.FinishPartEncoded["usage"] => {
  const cacheRead = u?.cache_read_input_tokens ?? undefined
  const cacheWrite = u?.cache_creation_input_tokens ?? undefined
  const uncached = u?.input_tokens ?? undefined
  return Tools.usage({
    inputTotal: uncached === undefined ? undefined : uncached + (cacheRead ?? 0) + (cacheWrite ?? 0),
    cacheRead,
    cacheWrite,
    outputTotal: u?.output_tokens
  })
}

const metadataPart = (message: typeof MessageSchema.Type): Response.ResponseMetadataPartEncoded => ({
  type: "response-metadata",
  id: message.id,
  ...(message.model === undefined ? {} : { modelId: message.model })
})

/** The response parts of an answer. */
export const parts = (message: typeof MessageSchema.Type, tools: Tools.PreparedTools): Array<Response.PartEncoded> => {
  const out: Array<Response.PartEncoded> = [metadataPart(message)]
  for (const block of message.content) {
    if (block.type === "text" && block.text !== undefined && block.text.length > 0) {
      out.push({ type: "text", text: block.text })
    } else if (block.type === "tool_use" && block.id !== undefined && block.name !== undefined) {
      out.push({
        type: "tool-call",
        id: block.id,
        name: block.name,
        params: tools.argumentsOf(block.name, block.input ?? {})
      })
    } else if (block.type === "thinking" && block.thinking !== undefined) {
      out.push({
        type: "reasoning",
        text: block.thinking,
        ...(block.signature === undefined ? {} : { metadata: { anthropic: { signature: block.signature } } })
      })
    } else if (block.type === "redacted_thinking" && block.data !== undefined) {
      out.push({ type: "reasoning", text: "", metadata: { anthropic: { redactedData: block.data } } })
    }
  }
  out.push({ type: "finish", reason: finishReason(message.stop_reason), usage: usageOf(message.usage) })
  return out
}

type Block =
  | { readonly kind: "text"; readonly id: string }
  | { readonly kind: "thinking"; readonly id: string; signature: string | undefined }
  | { readonly kind: "tool"; readonly id: string; readonly name: string; json: string }
  | { readonly kind: "other" }

/**
 * The stream parts of a streamed answer: each content block starts, grows
 * by its deltas (text, tool input JSON, thinking) and stops; a tool use
 * becomes a tool call with its input parsed from the assembled JSON when its
 * block stops; `message_stop` finishes it with the usage of `message_start`
 * and `message_delta`.
 */
export const streamParts = (
  connection: Http.Connection,
  method: string,
  events: Stream.Stream<Sse.Event, AiError.AiError>,
  tools: Tools.PreparedTools
): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> =>
  Stream.suspend(() => {
    let done = false
    let messageId = "msg"
    let stopReason: string | null | undefined
    let usage: typeof Usage.Type = {}
    const blocks = new Map<number, Block>()

    const decode = <S extends Schema.Codec<unknown, unknown>>(schema: S, json: unknown) =>
      Http.decodeValue(connection, method, schema, json)

    const onStart = ({ index, content_block: block }: typeof BlockStart.Type): Array<Response.StreamPartEncoded> => {
      const id = `${messageId}_${index}`
      switch (block.type) {
        case "text": {
          blocks.set(index, { kind: "text", id })
          const text = block.text ?? ""
          return [
            { type: "text-start", id },
            ...(text.length > 0 ? [{ type: "text-delta" as const, id, delta: text }] : [])
          ]
        }
        case "thinking":
          blocks.set(index, { kind: "thinking", id, signature: block.signature })
          return [{ type: "reasoning-start", id }]
        case "redacted_thinking":
          blocks.set(index, { kind: "other" })
          return [
            { type: "reasoning-start", id },
            { type: "reasoning-end", id, metadata: { anthropic: { redactedData: block.data ?? "" } } }
          ]
        case "tool_use": {
          const callId = block.id ?? id
          const name = block.name ?? ""
          blocks.set(index, { kind: "tool", id: callId, name, json: "" })
          return [{ type: "tool-params-start", id: callId, name }]
        }
        default:
          blocks.set(index, { kind: "other" })
          return []
      }
    }

    const onDelta = ({ index, delta }: typeof BlockDelta.Type): Array<Response.StreamPartEncoded> => {
      const block = blocks.get(index)
      if (block === undefined) return []
      if (block.kind === "text" && delta.text !== undefined)
        return [{ type: "text-delta", id: block.id, delta: delta.text }]
      if (block.kind === "thinking") {
        if (delta.signature !== undefined) block.signature = delta.signature
        if (delta.thinking !== undefined) return [{ type: "reasoning-delta", id: block.id, delta: delta.thinking }]
      }
      if (block.kind === "tool" && delta.partial_json !== undefined) {
        block.json += delta.partial_json
        return delta.partial_json.length > 0
          ? [{ type: "tool-params-delta", id: block.id, delta: delta.partial_json }]
          : []
      }
      return []
    }

    const onStop = ({ index }: typeof BlockStop.Type): Array<Response.StreamPartEncoded> => {
      const block = blocks.get(index)
      blocks.delete(index)
      if (block === undefined) return []
      switch (block.kind) {
        case "text":
          return [{ type: "text-end", id: block.id }]
        case "thinking":
          return [
            {
              type: "reasoning-end",
              id: block.id,
              ...(block.signature === undefined ? {} : { metadata: { anthropic: { signature: block.signature } } })
            }
          ]
        case "tool":
          return [
            { type: "tool-params-end", id: block.id },
            { type: "tool-call", id: block.id, name: block.name, params: tools.argumentsOf(block.name, block.json) }
          ]
        case "other":
          return []
      }
    }

    const onEvent = (event: Sse.Event): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.AiError> =>
      done
        ? Effect.succeed([])
        : Effect.flatMap(
            Http.eventJson(connection, method, event),
            (json): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.AiError> => {
              const type = Tools.isRecord(json) && typeof json.type === "string" ? json.type : event.event
              switch (type) {
                case "message_start":
                  return Effect.map(decode(MessageStart, json), ({ message }) => {
                    messageId = message.id
                    usage = message.usage ?? {}
                    return [metadataPart(message)]
                  })
                case "content_block_start":
                  return Effect.map(decode(BlockStart, json), onStart)
                case "content_block_delta":
                  return Effect.map(decode(BlockDelta, json), onDelta)
                case "content_block_stop":
                  return Effect.map(decode(BlockStop, json), onStop)
                case "message_delta":
                  return Effect.map(decode(MessageDelta, json), (e) => {
                    if (e.delta.stop_reason !== undefined) stopReason = e.delta.stop_reason
                    // The delta's counts are cumulative: they replace those of message_start where given.
                    const next = e.usage ?? {}
                    usage = {
                      ...usage,
                      ...Object.fromEntries(Object.entries(next).filter(([, v]) => v !== null && v !== undefined))
                    }
                    return []
                  })
                case "message_stop":
                  done = true
                  return Effect.succeed([
                    { type: "finish" as const, reason: finishReason(stopReason), usage: usageOf(usage) }
                  ])
                case "error":
                  return Effect.flatMap(decode(ErrorEvent, json), (e) =>
                    Effect.fail(
                      Http.streamError(connection, method, {
                        message: e.error.message,
                        type: e.error.type,
                        code: undefined
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
