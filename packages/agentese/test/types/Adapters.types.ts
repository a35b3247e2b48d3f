/**
 * What the adapters return has the shapes the ecosystems declare, checked by `tsc` (part of `npm test`)
 * against their own type definitions: the raw definitions are valid `tools` of the official `openai` and
 * `@anthropic-ai/sdk` requests and their results valid tool results, the Vercel tools a `ToolSet` for
 * `generateText`, the LangChain tools bindable to a chat model. Each `@ts-expect-error` shows that a check
 * can fail.
 */

import type { MessageCreateParams, ToolResultBlockParam, ToolUnion } from "@anthropic-ai/sdk/resources/messages"
import type { BaseChatModel } from "@langchain/core/language_models/chat_models"
import type { ToolMessage } from "@langchain/core/messages"
import type { StructuredToolInterface } from "@langchain/core/tools"
import type { AnthropicTools } from "@ugent/agentese/adapters/anthropic"
import type { LangChainTools } from "@ugent/agentese/adapters/langchain"
import type { OpenAiTools } from "@ugent/agentese/adapters/openai"
import type { VercelTools } from "@ugent/agentese/adapters/vercel"
import type { generateText, ToolSet } from "ai"
import type { ChatCompletionTool, ChatCompletionToolMessageParam } from "openai/resources/chat/completions"
import type { FunctionTool, ResponseInputItem, Tool as ResponsesTool } from "openai/resources/responses/responses"

declare const openai: OpenAiTools
declare const anthropic: AnthropicTools
declare const vercel: VercelTools
declare const langchain: LangChainTools
declare const chatModel: BaseChatModel

// Raw OpenAI: Chat Completions' nested tools, the Responses API's flat ones, and what goes back.
export const chat: Array<ChatCompletionTool> = openai.chatCompletions
export const responses: Array<ResponsesTool> = openai.responses
export const flat: Array<FunctionTool> = openai.responses
export const toolMessage = async (): Promise<ChatCompletionToolMessageParam> => ({
  role: "tool",
  tool_call_id: "call_1",
  content: await openai.handleToolCall("world_tools_file_read", '{"path":"a.txt"}')
})
export const functionOutput = async (): Promise<ResponseInputItem> => ({
  type: "function_call_output",
  call_id: "call_1",
  output: await openai.handleToolCall("world_tools_file_read", '{"path":"a.txt"}')
})
// @ts-expect-error the Chat Completions tools are nested, not the Responses API's flat shape
export const crossed: Array<FunctionTool> = openai.chatCompletions

// Raw Anthropic: the tools of a request, and a tool_use block answered with a tool_result block.
export const anthropicTools: Array<ToolUnion> = anthropic.tools
export const request: MessageCreateParams = {
  model: "claude",
  max_tokens: 1024,
  messages: [{ role: "user", content: "hi" }],
  tools: anthropic.tools
}
export const result = async (): Promise<ToolResultBlockParam> =>
  anthropic.handleToolUse({ id: "toolu_1", name: "world_tools_file_read", input: { path: "a.txt" } })

// Vercel AI SDK: a ToolSet, accepted by generateText.
export const set: ToolSet = vercel
export type GenerateWith = Parameters<typeof generateText<typeof vercel>>[0]["tools"]
// @ts-expect-error the tools are a record by name, not an array
export const notArray: ReadonlyArray<unknown> = vercel

// LangChain.js: structured tools a chat model binds, answering a tool call with a ToolMessage.
export const structured: ReadonlyArray<StructuredToolInterface> = langchain
export const bound = chatModel.bindTools?.([...langchain])
export const answered = async (): Promise<ToolMessage> =>
  langchain[0]!.invoke({ type: "tool_call", id: "c1", name: "world_tools_file_read", args: { path: "a.txt" } } as const)
