/**
 * The served paths as LangChain.js tools, driven by LangChain's own fake
 * chat model (`FakeStreamingChatModel`, which answers with the tool calls it
 * is given; one per turn here, as a scripted model): the model reads
 * notes.md, edits it (the conversation's session supplies the read proof),
 * tries a path the caller is not offered, and answers. Each tool call is
 * answered with a `ToolMessage` (`status: "error"` for a failure, the
 * outcome as its `artifact`).
 *
 * Run it with `npm run example examples/adapters/langchain.ts` (the repository's Node, on the
 * TypeScript sources; after `npm install`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  HumanMessage,
  type ToolCall,
  ToolMessage
} from "@langchain/core/messages"
import { FakeStreamingChatModel } from "@langchain/core/utils/testing"
import { toLangChainTools } from "@ugent/agentese/adapters/langchain"

const root = mkdtempSync(join(tmpdir(), "ugent-langchain-"))
writeFileSync(join(root, "notes.md"), "tea\n")

const say = (text: string, toolCalls: Array<ToolCall> = []) =>
  new FakeStreamingChatModel({
    responses: [new AIMessage(text)],
    chunks: [new AIMessageChunk({ content: text, tool_calls: toolCalls })]
  })
const script = [
  say("", [{ type: "tool_call", id: "call_1", name: "world_tools_file_read", args: { path: "notes.md" } }]),
  say("", [
    {
      type: "tool_call",
      id: "call_2",
      name: "world_tools_file_edit",
      args: { path: "notes.md", oldText: "tea", newText: "tea\ncoffee" }
    }
  ]),
  say("", [{ type: "tool_call", id: "call_3", name: "world_tools_web_fetch", args: { url: "https://example.com" } }]),
  say("notes.md lists tea and coffee.")
]

// The loop.
await using tools = await toLangChainTools({
  server: { root, trust: 1, stores: "memory", recipe: { deny: ["world.tools.web.*"] } }
})
const byName = new Map(tools.map((t) => [t.name, t]))
const messages: Array<BaseMessage> = [new HumanMessage("Add coffee to notes.md")]
for (const model of script) {
  const reply = await model.bindTools([...tools]).invoke(messages)
  messages.push(reply)
  if (!reply.tool_calls?.length) break
  for (const call of reply.tool_calls) {
    const tool = byName.get(call.name)
    const answer = tool
      ? await tool.invoke(call)
      : new ToolMessage({ tool_call_id: call.id!, status: "error", content: `${call.name} is not offered to you` })
    messages.push(answer)
    console.log(`${call.name}: ${answer.status} ${String(answer.content).slice(0, 50)}`)
  }
}

console.log(`offered: ${tools.length} tools, web fetch offered: ${byName.has("world_tools_web_fetch")}`)
console.log(`model: ${messages.at(-1)?.content}`)
console.log(`notes.md: ${JSON.stringify(readFileSync(join(root, "notes.md"), "utf8"))}`)
rmSync(root, { recursive: true, force: true })
