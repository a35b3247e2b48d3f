/**
 * The served paths in a raw OpenAI Chat Completions loop, with the official
 * `openai` client: `toOpenAiTools` gives the `tools` (strict mode) and
 * `handleToolCall` runs each call on the road. The model is a local replay
 * server answering as the API does: it reads notes.md, then edits it (the
 * conversation's session supplies the read proof), then answers.
 *
 * Run it with `npm run example examples/adapters/openai.ts` (the repository's Node, on the
 * TypeScript sources; after `npm install`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { toOpenAiTools } from "@ugent/agentese/adapters/openai"
import OpenAI from "openai"
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions"
import { replay } from "./replay.ts"

const root = mkdtempSync(join(tmpdir(), "ugent-openai-"))
writeFileSync(join(root, "notes.md"), "tea\n")

const toolCall = (id: string, name: string, args: unknown) => ({
  choices: [
    {
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }]
      }
    }
  ]
})
await using model = await replay([
  toolCall("call_1", "world_tools_file_read", { path: "notes.md", offset: null, limit: null }),
  toolCall("call_2", "world_tools_file_edit", {
    path: "notes.md",
    oldText: "tea",
    newText: "tea\ncoffee",
    proof: null
  }),
  {
    choices: [
      { index: 0, finish_reason: "stop", message: { role: "assistant", content: "notes.md lists tea and coffee." } }
    ]
  }
])

// The loop.
const client = new OpenAI({ apiKey: "replay", baseURL: model.url })
await using tools = await toOpenAiTools({ server: { root, trust: 1, stores: "memory" } })
const messages: Array<ChatCompletionMessageParam> = [{ role: "user", content: "Add coffee to notes.md" }]
for (let step = 0; step < 10; step++) {
  const reply = (await client.chat.completions.create({ model: "replayed", messages, tools: tools.chatCompletions }))
    .choices[0]!.message
  messages.push(reply)
  if (!reply.tool_calls?.length) break
  for (const call of reply.tool_calls) {
    if (call.type !== "function") continue
    const content = await tools.handleToolCall(call.function.name, call.function.arguments)
    messages.push({ role: "tool", tool_call_id: call.id, content })
    console.log(`${call.function.name}: ${content.slice(0, 60)}`)
  }
}

console.log(`model: ${messages.at(-1)?.content}`)
console.log(`strict tools offered: ${tools.chatCompletions.filter((t) => t.function.strict).length}`)
console.log(`notes.md: ${JSON.stringify(readFileSync(join(root, "notes.md"), "utf8"))}`)
rmSync(root, { recursive: true, force: true })
