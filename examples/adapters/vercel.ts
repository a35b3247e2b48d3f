/**
 * The served paths as Vercel AI SDK tools, driven by the SDK's own
 * `MockLanguageModelV4`: the model reads notes.md, then edits it. The recipe
 * puts every edit to a person, so `generateText` stops with a
 * `tool-approval-request`; the person's yes (a `tool-approval-response` in
 * the conversation) lets the edit run, and answers the road's own approval.
 * The conversation's session supplies the read proof to the edit.
 *
 * Run it with `npm run example examples/adapters/vercel.ts` (the repository's Node, on the
 * TypeScript sources; after `npm install`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { toVercelTools } from "@ugent/agentese/adapters/vercel"
import { generateText, type ModelMessage, stepCountIs } from "ai"
import { MockLanguageModelV4 } from "ai/test"

const root = mkdtempSync(join(tmpdir(), "ugent-vercel-"))
writeFileSync(join(root, "notes.md"), "tea\n")

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined }
}
type Part = { type: "tool-call"; toolCallId: string; toolName: string; input: string } | { type: "text"; text: string }
const turn = (content: Array<Part>) => ({
  content,
  finishReason: {
    unified: content[0]?.type === "tool-call" ? ("tool-calls" as const) : ("stop" as const),
    raw: undefined
  },
  usage,
  warnings: []
})
const model = new MockLanguageModelV4({
  doGenerate: [
    turn([{ type: "tool-call", toolCallId: "c1", toolName: "world_tools_file_read", input: '{"path":"notes.md"}' }]),
    turn([
      {
        type: "tool-call",
        toolCallId: "c2",
        toolName: "world_tools_file_edit",
        input: JSON.stringify({ path: "notes.md", oldText: "tea", newText: "tea\ncoffee" })
      }
    ]),
    turn([{ type: "text", text: "notes.md lists tea and coffee." }])
  ]
})

// The tools of one conversation, and the conversation.
await using tools = await toVercelTools({
  server: { root, trust: 1, stores: "memory", recipe: { requireApproval: ["world.tools.file.edit"] } }
})
const messages: Array<ModelMessage> = [{ role: "user", content: "Add coffee to notes.md" }]
for (let round = 0; round < 5; round++) {
  const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(10) })
  messages.push(...result.responseMessages)
  // What the model was sent: a result (json), or a failure it reads (error-json).
  for (const message of result.responseMessages) {
    if (message.role !== "tool") continue
    for (const part of message.content) {
      if (part.type === "tool-result")
        console.log(`${part.toolName}: ${part.output.type} ${JSON.stringify(part.output).slice(0, 60)}`)
    }
  }
  const asked = result.content.filter((p) => p.type === "tool-approval-request")
  if (asked.length === 0) {
    console.log(`model: ${result.text}`)
    break
  }
  // A real application shows the call to a person; here the person says yes.
  for (const a of asked) console.log(`approval asked: ${a.toolCall.toolName} ${JSON.stringify(a.toolCall.input)}`)
  messages.push({
    role: "tool",
    content: asked.map((a) => ({ type: "tool-approval-response", approvalId: a.approvalId, approved: true }))
  })
}

console.log(`notes.md: ${JSON.stringify(readFileSync(join(root, "notes.md"), "utf8"))}`)
rmSync(root, { recursive: true, force: true })
