/**
 * The wire shapes of the model providers, checked by `tsc` (part of `npm test`) against the official SDKs'
 * type definitions: every request body we build is a valid SDK request, and every answer and streamed event
 * the SDK declares fits the schema we decode it with. If either side drifts, the build fails. Each
 * `@ts-expect-error` shows that a check can fail.
 */

import type {
  Message,
  MessageCreateParams,
  MessageParam,
  RawContentBlockDeltaEvent,
  RawContentBlockStartEvent,
  RawContentBlockStopEvent,
  RawMessageDeltaEvent,
  RawMessageStartEvent,
  Tool as AnthropicTool,
  ToolChoice as AnthropicToolChoice
} from "@anthropic-ai/sdk/resources/messages"
import type { ErrorResponse } from "@anthropic-ai/sdk/resources/shared"
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParams,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption
} from "openai/resources/chat/completions"
import type {
  FunctionTool,
  Response,
  ResponseCompletedEvent,
  ResponseCreatedEvent,
  ResponseCreateParams,
  ResponseErrorEvent,
  ResponseFunctionToolCall,
  ResponseFailedEvent,
  ResponseFunctionCallArgumentsDeltaEvent,
  ResponseIncompleteEvent,
  ResponseInputItem,
  ResponseOutputItemAddedEvent,
  ResponseOutputItemDoneEvent,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseReasoningSummaryTextDeltaEvent,
  ResponseReasoningTextDeltaEvent,
  ResponseRefusalDeltaEvent,
  ResponseTextDeltaEvent,
  ToolChoiceFunction,
  ToolChoiceOptions
} from "openai/resources/responses/responses"
import type * as Anthropic from "../../src/providers/internal/anthropic.ts"
import type * as Chat from "../../src/providers/internal/openAiChat.ts"
import type * as Responses from "../../src/providers/internal/openAiResponses.ts"

/** `from` is assignable to `to`: the function compiles only if it is. */
const fits =
  <To>() =>
  <From extends To>(_: (from: From) => void) =>
    undefined

// ---------------------------------------------------------------------------------------------------------------------
// OpenAI Chat Completions
// ---------------------------------------------------------------------------------------------------------------------

// The requests we send are requests the SDK accepts: the whole body, each message, each tool, each tool choice.
export const chatRequest = (body: Chat.Request): ChatCompletionCreateParams => body
export const chatMessage = (message: Chat.Message): ChatCompletionMessageParam => message
export const chatTool = (tool: Chat.FunctionTool): ChatCompletionTool => tool
export const chatToolChoice = (choice: Chat.ToolChoice): ChatCompletionToolChoiceOption => choice

// The answers the SDK describes decode with our schemas.
export const chatCompletion = (answer: ChatCompletion): typeof Chat.Completion.Encoded => answer
export const chatChunk = (chunk: ChatCompletionChunk): typeof Chat.Chunk.Encoded => chunk

// @ts-expect-error a tool result needs the id of the call it answers
export const chatBadMessage: ChatCompletionMessageParam = { role: "tool", content: "x" } satisfies Omit<
  Extract<Chat.Message, { role: "tool" }>,
  "tool_call_id"
>

// ---------------------------------------------------------------------------------------------------------------------
// OpenAI Responses
// ---------------------------------------------------------------------------------------------------------------------

export const responsesRequest = (body: Responses.Request): ResponseCreateParams => body
export const responsesInput = (item: Responses.InputItem): ResponseInputItem => item
export const responsesTool = (tool: Responses.FunctionTool): FunctionTool => tool
export const responsesToolChoice = (choice: Responses.ToolChoice): ToolChoiceOptions | ToolChoiceFunction => choice

export const responsesAnswer = (answer: Response): typeof Responses.ResponseObject.Encoded => answer
export const responsesCreated = (e: ResponseCreatedEvent): typeof Responses.ResponseEvent.Encoded => e
export const responsesCompleted = (e: ResponseCompletedEvent): typeof Responses.ResponseEvent.Encoded => e
export const responsesIncomplete = (e: ResponseIncompleteEvent): typeof Responses.ResponseEvent.Encoded => e
export const responsesFailed = (e: ResponseFailedEvent): typeof Responses.ResponseEvent.Encoded => e
export const responsesItemAdded = (e: ResponseOutputItemAddedEvent): typeof Responses.OutputItemEvent.Encoded => e
export const responsesItemDone = (e: ResponseOutputItemDoneEvent): typeof Responses.OutputItemEvent.Encoded => e
export const responsesMessage = (item: ResponseOutputMessage): typeof Responses.MessageItem.Encoded => item
export const responsesCall = (item: ResponseFunctionToolCall): typeof Responses.FunctionCallItem.Encoded => item
export const responsesReasoningItem = (item: ResponseReasoningItem): typeof Responses.ReasoningItem.Encoded => item
export const responsesText = (e: ResponseTextDeltaEvent): typeof Responses.DeltaEvent.Encoded => e
export const responsesRefusal = (e: ResponseRefusalDeltaEvent): typeof Responses.DeltaEvent.Encoded => e
export const responsesArgs = (e: ResponseFunctionCallArgumentsDeltaEvent): typeof Responses.DeltaEvent.Encoded => e
export const responsesSummary = (e: ResponseReasoningSummaryTextDeltaEvent): typeof Responses.DeltaEvent.Encoded => e
export const responsesReasoning = (e: ResponseReasoningTextDeltaEvent): typeof Responses.DeltaEvent.Encoded => e
export const responsesError = (e: ResponseErrorEvent): typeof Responses.ErrorEvent.Encoded => e

// The Responses API's function tool is flat: the Chat Completions shape is not one.
// @ts-expect-error a nested Chat Completions tool has no top-level name
export const responsesNested = (tool: Chat.FunctionTool): FunctionTool => tool

// ---------------------------------------------------------------------------------------------------------------------
// Anthropic Messages
// ---------------------------------------------------------------------------------------------------------------------

export const anthropicRequest = (body: Anthropic.Request): MessageCreateParams => body
export const anthropicMessage = (message: Anthropic.Message): MessageParam => message
export const anthropicTool = (tool: Anthropic.Tool): AnthropicTool => tool
export const anthropicToolChoice = (choice: Anthropic.ToolChoice): AnthropicToolChoice => choice

export const anthropicAnswer = (answer: Message): typeof Anthropic.MessageSchema.Encoded => answer
export const anthropicStart = (e: RawMessageStartEvent): typeof Anthropic.MessageStart.Encoded => e
export const anthropicBlockStart = (e: RawContentBlockStartEvent): typeof Anthropic.BlockStart.Encoded => e
export const anthropicBlockDelta = (e: RawContentBlockDeltaEvent): typeof Anthropic.BlockDelta.Encoded => e
export const anthropicBlockStop = (e: RawContentBlockStopEvent): typeof Anthropic.BlockStop.Encoded => e
export const anthropicDelta = (e: RawMessageDeltaEvent): typeof Anthropic.MessageDelta.Encoded => e
export const anthropicError = (e: ErrorResponse): typeof Anthropic.ErrorEvent.Encoded => e

// Anthropic requires max_tokens: a body without it is not a request.
// @ts-expect-error max_tokens is required
export const anthropicNoMax = (body: Omit<Anthropic.Request, "max_tokens">): MessageCreateParams => body

void fits
