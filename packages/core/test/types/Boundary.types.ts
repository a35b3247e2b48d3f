/**
 * The function definitions `Boundary` exports have the shapes the providers' official SDKs declare,
 * checked by `tsc` (part of `npm test`): if our shapes or theirs drift apart, the build fails.
 */

import type { Tool as AnthropicTool } from "@anthropic-ai/sdk/resources/messages"
import { Boundary, Tool } from "@ugent/core"
import { Schema } from "effect"
import type { ChatCompletionFunctionTool, ChatCompletionTool } from "openai/resources/chat/completions"
import type { FunctionTool, Tool as ResponsesTool } from "openai/resources/responses/responses"

const read = Tool.fromFunction({
  name: "file.read",
  input: Schema.Struct({ path: Schema.String, limit: Schema.optionalKey(Schema.Int) }),
  f: ({ path }: { readonly path: string; readonly limit?: number }) => path
})

// Chat Completions: the nested `{ type: "function", function: {...} }` shape, plain and strict.
export const chat: ChatCompletionFunctionTool = Boundary.toOpenAiFunction(read)
export const chatStrict: ChatCompletionTool = Boundary.toOpenAiFunction(read, { strict: true })

// Responses API: the flat `{ type: "function", name, parameters, strict }` shape.
export const responses: FunctionTool = Boundary.toOpenAiResponsesTool(read)
export const responsesStrict: ResponsesTool = Boundary.toOpenAiResponsesTool(read, { strict: true })

// Anthropic Messages API: `{ name, description, input_schema: { type: "object", ... }, strict? }`.
export const anthropic: AnthropicTool = Boundary.toAnthropicTool(read)
export const anthropicStrict: AnthropicTool = Boundary.toAnthropicTool(read, { strict: true })

// The shapes are not interchangeable: the nested Chat Completions shape is not a Responses tool.
// @ts-expect-error a Chat Completions definition has no top-level name
export const wrong: FunctionTool = Boundary.toOpenAiFunction(read)
