/**
 * The OpenAI Chat Completions wire format (`POST /chat/completions`): the
 * request we send, the schemas of the answer and of its streamed chunks, and
 * their translation to and from `effect/ai`'s prompt and response parts. The
 * same format is spoken by OpenAI-compatible servers (Ollama, vLLM, LM
 * Studio), so nothing here assumes OpenAI's own extensions.
 *
 * @internal
 */
import { Effect, type JsonSchema, Predicate, Schema, Stream } from "effect"
import type { AiError, LanguageModel, Prompt, Response } from "effect/ai"
import type { Sse } from "effect/encoding"
import * as Http from "./http.ts"
import * as Tools from "./tools.ts"

// ---------------------------------------------------------------------------------------------------------------------
// The request (checked against the openai SDK's `ChatCompletionCreateParams` in test/types)
// ---------------------------------------------------------------------------------------------------------------------

/** A content part of a user message. */
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | { type: "file"; file: { file_data: string; filename?: string } }

/** A function call the assistant made, sent back in the history. */
export interface ToolCall {
  id: string
  type: "function"
  function: { name: string; arguments: string }
}

/** A message of the conversation. */
export type Message =
  | { role: "system"; content: string }
  | { role: "user"; content: string | Array<ContentPart> }
  | { role: "assistant"; content: string | null; tool_calls?: Array<ToolCall> }
  | { role: "tool"; tool_call_id: string; content: string }

/** A function the model may call. */
export interface FunctionTool {
  type: "function"
  function: { name: string; description?: string; parameters: JsonSchema.JsonSchema; strict?: boolean }
}

/** Which tool the model must, may or must not call. */
export type ToolChoice = "auto" | "none" | "required" | { type: "function"; function: { name: string } }

/** A structured answer: JSON that fits a schema. */
export interface ResponseFormat {
  type: "json_schema"
  json_schema: { name: string; description?: string; schema: JsonSchema.JsonSchema; strict: boolean }
}

/** The body of `POST /chat/completions`. */
export interface Request {
  model: string
  messages: Array<Message>
  tools?: Array<FunctionTool>
  tool_choice?: ToolChoice
  response_format?: ResponseFormat
  max_completion_tokens?: number
  max_tokens?: number
  temperature?: number
  stream?: boolean
  stream_options?: { include_usage: boolean }
}

// ---------------------------------------------------------------------------------------------------------------------
// The answer (the openai SDK's `ChatCompletion` and `ChatCompletionChunk` must be assignable to these, see test/types)
// ---------------------------------------------------------------------------------------------------------------------

const NullableString = Schema.optionalKey(Schema.NullOr(Schema.String))
const NullableNumber = Schema.optionalKey(Schema.NullOr(Schema.Number))

/** Token counts. */
export const Usage = Schema.Struct({
  prompt_tokens: Schema.optionalKey(Schema.Number),
  completion_tokens: Schema.optionalKey(Schema.Number),
  total_tokens: Schema.optionalKey(Schema.Number),
  prompt_tokens_details: Schema.optionalKey(Schema.NullOr(Schema.Struct({ cached_tokens: NullableNumber }))),
  completion_tokens_details: Schema.optionalKey(Schema.NullOr(Schema.Struct({ reasoning_tokens: NullableNumber })))
})

/** A tool call of an answer; a non-function call (a custom tool) has no `function`. */
export const CompletionToolCall = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  type: Schema.optionalKey(Schema.String),
  function: Schema.optionalKey(Schema.Struct({ name: Schema.String, arguments: Schema.String }))
})

/** The answer of `POST /chat/completions`. */
export const Completion = Schema.Struct({
  id: Schema.String,
  created: Schema.optionalKey(Schema.Number),
  model: Schema.optionalKey(Schema.String),
  choices: Schema.Array(
    Schema.Struct({
      message: Schema.Struct({
        content: NullableString,
        refusal: NullableString,
        // Reasoning text of servers that expose it (DeepSeek, vLLM, Ollama).
        reasoning_content: NullableString,
        reasoning: NullableString,
        tool_calls: Schema.optionalKey(Schema.NullOr(Schema.Array(CompletionToolCall)))
      }),
      finish_reason: NullableString
    })
  ),
  usage: Schema.optionalKey(Schema.NullOr(Usage))
})

/** A streamed chunk of an answer (`stream: true`). */
export const Chunk = Schema.Struct({
  id: Schema.String,
  created: Schema.optionalKey(Schema.Number),
  model: Schema.optionalKey(Schema.String),
  choices: Schema.Array(
    Schema.Struct({
      delta: Schema.optionalKey(
        Schema.NullOr(
          Schema.Struct({
            content: NullableString,
            refusal: NullableString,
            reasoning_content: NullableString,
            reasoning: NullableString,
            tool_calls: Schema.optionalKey(
              Schema.NullOr(
                Schema.Array(
                  Schema.Struct({
                    index: Schema.optionalKey(Schema.Number),
                    id: NullableString,
                    type: Schema.optionalKey(Schema.String),
                    function: Schema.optionalKey(
                      Schema.NullOr(Schema.Struct({ name: NullableString, arguments: NullableString }))
                    )
                  })
                )
              )
            )
          })
        )
      ),
      finish_reason: NullableString
    })
  ),
  usage: Schema.optionalKey(Schema.NullOr(Usage))
})

// ---------------------------------------------------------------------------------------------------------------------
// Prompt → request
// ---------------------------------------------------------------------------------------------------------------------

/** The settings of a Chat Completions model. */
export interface Settings {
  readonly model: string
  readonly strictTools: boolean
  readonly maxOutputTokens: number | undefined
  readonly maxTokensField: "max_completion_tokens" | "max_tokens"
  readonly temperature: number | undefined
}

const argumentsText = (params: unknown): string =>
  typeof params === "string" ? params : (JSON.stringify(params) ?? "{}")

const userContent = (
  connection: Http.Connection,
  method: string,
  parts: ReadonlyArray<Prompt.UserMessagePart>
): Effect.Effect<string | Array<ContentPart>, AiError.AiError> =>
  Effect.gen(function* () {
    if (parts.every((p) => p.type === "text")) return parts.map((p) => (p as Prompt.TextPart).text).join("\n")
    const out: Array<ContentPart> = []
    for (const part of parts) {
      if (part.type === "text") {
        out.push({ type: "text", text: part.text })
      } else if (part.mediaType.startsWith("image/")) {
        out.push({ type: "image_url", image_url: { url: Tools.fileUrl(Tools.fileSource(part)) } })
      } else if (part.mediaType === "application/pdf") {
        const source = Tools.fileSource(part)
        if (source._tag === "url") {
          return yield* Tools.unsupportedInput(connection, method, "Chat Completions takes a PDF as data, not as a URL")
        }
        out.push({
          type: "file",
          file: {
            file_data: Tools.fileUrl(source),
            ...(part.fileName === undefined ? {} : { filename: part.fileName })
          }
        })
      } else {
        return yield* Tools.unsupportedInput(
          connection,
          method,
          `Chat Completions takes images and PDF files, not ${part.mediaType}`
        )
      }
    }
    return out
  })

/** The messages of a prompt. */
export const messages = (
  connection: Http.Connection,
  method: string,
  prompt: Prompt.Prompt
): Effect.Effect<Array<Message>, AiError.AiError> =>
  Effect.gen(function* () {
    const out: Array<Message> = []
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
          const calls: Array<ToolCall> = []
          const results: Array<Message> = []
          for (const part of message.content) {
            if (part.type === "text") text += part.text
            else if (part.type === "tool-call" && !part.providerExecuted) {
              calls.push({
                id: part.id,
                type: "function",
                function: { name: part.name, arguments: argumentsText(part.params) }
              })
            } else if (part.type === "tool-result" && !part.providerExecuted) {
              results.push({ role: "tool", tool_call_id: part.id, content: Tools.toolResultText(part) })
            }
          }
          if (text.length > 0 || calls.length > 0) {
            out.push({
              role: "assistant",
              content: text.length > 0 ? text : null,
              ...(calls.length > 0 ? { tool_calls: calls } : {})
            })
          }
          out.push(...results)
          break
        }
        case "tool":
          for (const part of message.content) {
            if (part.type === "tool-result") {
              out.push({ role: "tool", tool_call_id: part.id, content: Tools.toolResultText(part) })
            }
          }
          break
      }
    }
    return out
  })

const toolChoice = (choice: LanguageModel.ToolChoice<string>): ToolChoice => {
  if (typeof choice === "string") return choice
  if ("tool" in choice) return { type: "function", function: { name: choice.tool } }
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
      messages: yield* messages(connection, method, options.prompt)
    }
    if (tools.definitions.length > 0) {
      body.tools = tools.definitions.map((d) => ({
        type: "function",
        function: {
          name: d.name,
          ...(d.description === undefined ? {} : { description: d.description }),
          parameters: d.parameters,
          ...(d.strict ? { strict: true } : {})
        }
      }))
      body.tool_choice = toolChoice(options.toolChoice)
    }
    if (options.responseFormat.type === "json") {
      body.response_format = {
        type: "json_schema",
        json_schema: {
          name: Tools.formatName(options.responseFormat.objectName),
          schema: yield* Tools.responseSchema(connection, method, options.responseFormat.schema, "openai"),
          strict: true
        }
      }
    }
    if (settings.maxOutputTokens !== undefined) body[settings.maxTokensField] = settings.maxOutputTokens
    if (settings.temperature !== undefined) body.temperature = settings.temperature
    return { body, tools }
  })

// ---------------------------------------------------------------------------------------------------------------------
// Answer → response parts
// ---------------------------------------------------------------------------------------------------------------------

/** The finish reason of a choice; a server that says `stop` after tool calls meant `tool-calls`. */
export const finishReason = (reason: string | null | undefined, hasToolCalls: boolean): Response.FinishReason => {
  switch (reason) {
    case "length":
      return "length"
    case "content_filter":
      return "content-filter"
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    case "stop":
      return hasToolCalls ? "tool-calls" : "stop"
    case null:
    case undefined:
      return hasToolCalls ? "tool-calls" : "unknown"
    default:
      return "other"
  }
}

const usageOf = (u: typeof Usage.Type | null | undefined): Response.FinishPartEncoded["usage"] =>
  Tools.usage({
    inputTotal: u?.prompt_tokens,
    cacheRead: u?.prompt_tokens_details?.cached_tokens ?? undefined,
    outputTotal: u?.completion_tokens,
    reasoning: u?.completion_tokens_details?.reasoning_tokens ?? undefined
  })

const metadataPart = (id: string, model: string | undefined, created: number | undefined): Response.PartEncoded => {
  const timestamp = Tools.isoOfSeconds(created)
  return {
    type: "response-metadata",
    id,
    ...(model === undefined ? {} : { modelId: model }),
    ...(timestamp === undefined ? {} : { timestamp })
  }
}

/** The response parts of an answer. */
export const parts = (completion: typeof Completion.Type, tools: Tools.PreparedTools): Array<Response.PartEncoded> => {
  const out: Array<Response.PartEncoded> = [metadataPart(completion.id, completion.model, completion.created)]
  const choice = completion.choices[0]
  const message = choice?.message
  let toolCalls = 0
  if (message !== undefined) {
    const reasoning = message.reasoning_content ?? message.reasoning
    if (typeof reasoning === "string" && reasoning.length > 0) out.push({ type: "reasoning", text: reasoning })
    if (typeof message.content === "string" && message.content.length > 0)
      out.push({ type: "text", text: message.content })
    if (typeof message.refusal === "string" && message.refusal.length > 0) {
      out.push({ type: "text", text: message.refusal, metadata: { openai: { refusal: true } } })
    }
    for (const [index, call] of (message.tool_calls ?? []).entries()) {
      if (call.function === undefined) continue
      toolCalls++
      out.push({
        type: "tool-call",
        id: call.id ?? `${completion.id}_tool_${index}`,
        name: call.function.name,
        params: tools.argumentsOf(call.function.name, call.function.arguments)
      })
    }
  }
  const refused = typeof message?.refusal === "string" && message.refusal.length > 0
  out.push({
    type: "finish",
    reason: refused ? "content-filter" : finishReason(choice?.finish_reason, toolCalls > 0),
    usage: usageOf(completion.usage)
  })
  return out
}

interface ActiveCall {
  readonly id: string
  name: string
  args: string
}

/**
 * The stream parts of a streamed answer: text, reasoning and tool-argument
 * deltas as they come, each tool call assembled from its argument deltas
 * when the answer ends (`[DONE]`), then the finish part with the usage of
 * the last chunk.
 */
export const streamParts = (
  connection: Http.Connection,
  method: string,
  events: Stream.Stream<Sse.Event, AiError.AiError>,
  tools: Tools.PreparedTools
): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> =>
  Stream.suspend(() => {
    let started = false
    let textId: string | undefined
    let reasoningId: string | undefined
    let responseId = "chatcmpl"
    let finish: string | null | undefined
    let refused = false
    let usage: typeof Usage.Type | null | undefined
    let done = false
    const calls = new Map<number, ActiveCall>()

    const close = (): Array<Response.StreamPartEncoded> => {
      const out: Array<Response.StreamPartEncoded> = []
      if (reasoningId !== undefined) out.push({ type: "reasoning-end", id: reasoningId })
      if (textId !== undefined) out.push({ type: "text-end", id: textId })
      reasoningId = undefined
      textId = undefined
      for (const call of calls.values()) {
        out.push({ type: "tool-params-end", id: call.id })
        out.push({ type: "tool-call", id: call.id, name: call.name, params: tools.argumentsOf(call.name, call.args) })
      }
      out.push({
        type: "finish",
        reason: refused ? "content-filter" : finishReason(finish, calls.size > 0),
        usage: usageOf(usage)
      })
      done = true
      return out
    }

    const onChunk = (chunk: typeof Chunk.Type): Array<Response.StreamPartEncoded> => {
      const out: Array<Response.StreamPartEncoded> = []
      if (!started) {
        started = true
        responseId = chunk.id
        out.push(metadataPart(chunk.id, chunk.model, chunk.created) as Response.StreamPartEncoded)
      }
      if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage
      const choice = chunk.choices[0]
      if (choice === undefined) return out
      const delta = choice.delta
      const reasoning = delta?.reasoning_content ?? delta?.reasoning
      if (typeof reasoning === "string" && reasoning.length > 0) {
        if (reasoningId === undefined) {
          reasoningId = `${responseId}_reasoning`
          out.push({ type: "reasoning-start", id: reasoningId })
        }
        out.push({ type: "reasoning-delta", id: reasoningId, delta: reasoning })
      }
      const text = delta?.content ?? delta?.refusal
      if (typeof delta?.refusal === "string" && delta.refusal.length > 0) refused = true
      if (typeof text === "string" && text.length > 0) {
        if (reasoningId !== undefined) {
          out.push({ type: "reasoning-end", id: reasoningId })
          reasoningId = undefined
        }
        if (textId === undefined) {
          textId = `${responseId}_text`
          out.push({ type: "text-start", id: textId })
        }
        out.push({ type: "text-delta", id: textId, delta: text })
      }
      for (const [position, toolDelta] of (delta?.tool_calls ?? []).entries()) {
        const index = toolDelta.index ?? position
        const argsDelta = toolDelta.function?.arguments ?? ""
        const active = calls.get(index)
        if (active === undefined) {
          const call: ActiveCall = {
            id: toolDelta.id ?? `${responseId}_tool_${index}`,
            name: toolDelta.function?.name ?? "",
            args: argsDelta
          }
          calls.set(index, call)
          out.push({ type: "tool-params-start", id: call.id, name: call.name })
          if (argsDelta.length > 0) out.push({ type: "tool-params-delta", id: call.id, delta: argsDelta })
        } else {
          if (typeof toolDelta.function?.name === "string" && toolDelta.function.name.length > 0) {
            active.name = toolDelta.function.name
          }
          active.args += argsDelta
          if (argsDelta.length > 0) out.push({ type: "tool-params-delta", id: active.id, delta: argsDelta })
        }
      }
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) finish = choice.finish_reason
      return out
    }

    const onEvent = (event: Sse.Event): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.AiError> => {
      if (done) return Effect.succeed([])
      if (event.data.trim() === "[DONE]") return Effect.succeed(close())
      return Effect.flatMap(Http.eventJson(connection, method, event), (json) =>
        Predicate.hasProperty(json, "error") && json.error !== null && json.error !== undefined
          ? Effect.fail(Http.streamError(connection, method, Http.providerError(JSON.stringify(json))))
          : Effect.map(Http.decodeValue(connection, method, Chunk, json), onChunk)
      )
    }

    // A server that ends the stream without `[DONE]` but after a finish reason has finished.
    const end = Stream.suspend(() => {
      if (done) return Stream.empty
      if (finish !== undefined && finish !== null) return Stream.fromIterable(close())
      return Stream.fail(Http.truncated(connection, method))
    })

    return events.pipe(Stream.mapEffect(onEvent), Stream.flattenIterable, Stream.concat(end))
  })
