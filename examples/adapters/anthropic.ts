/**
 * The served paths in a raw Anthropic Messages loop, with the official
 * `@anthropic-ai/sdk` client: `toAnthropicTools` gives the `tools` and
 * `handleToolUse` answers each `tool_use` block with its `tool_result`. The
 * model is a local replay server answering as the API does: it reads
 * notes.md, tries to write a script outside the writable globs (refused with
 * `TrustDenied`, which the model reads), then edits notes.md (the conversation's session supplies the
 * read proof), then answers.
 *
 * Run it with `npm run example examples/adapters/anthropic.ts` (the repository's Node, on the
 * TypeScript sources; after `npm install`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Anthropic from "@anthropic-ai/sdk"
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages"
import { toAnthropicTools } from "@ugent/agentese/adapters/anthropic"
import { replay } from "./replay.ts"

const root = mkdtempSync(join(tmpdir(), "ugent-anthropic-"))
writeFileSync(join(root, "notes.md"), "tea\n")

const answer = (stop: "tool_use" | "end_turn", content: ReadonlyArray<unknown>) => ({
  id: "msg_replay",
  type: "message",
  role: "assistant",
  model: "replayed",
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 }
})
const use = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input })
await using model = await replay([
  answer("tool_use", [use("toolu_1", "world_tools_file_read", { path: "notes.md" })]),
  answer("tool_use", [use("toolu_2", "world_tools_file_write", { path: "run.sh", content: "rm -rf ~" })]),
  answer("tool_use", [
    use("toolu_3", "world_tools_file_edit", { path: "notes.md", oldText: "tea", newText: "tea\ncoffee" })
  ]),
  answer("end_turn", [{ type: "text", text: "notes.md lists tea and coffee." }])
])

// The loop.
const client = new Anthropic({ apiKey: "replay", baseURL: model.url })
await using tools = await toAnthropicTools({ server: { root, trust: 1, writable: ["*.md"], stores: "memory" } })
const messages: Array<MessageParam> = [{ role: "user", content: "Add coffee to notes.md" }]
for (let step = 0; step < 10; step++) {
  const reply = await client.messages.create({ model: "replayed", max_tokens: 1024, messages, tools: tools.tools })
  messages.push({ role: "assistant", content: reply.content })
  const uses = reply.content.filter((block) => block.type === "tool_use")
  if (uses.length === 0) break
  const results = await Promise.all(uses.map(tools.handleToolUse))
  messages.push({ role: "user", content: results })
  for (const r of results) console.log(`${r.is_error ? "refused" : "ok"}: ${r.content.slice(0, 80)}`)
}

const last = messages.at(-1)?.content
console.log(`model: ${Array.isArray(last) && last[0]?.type === "text" ? last[0].text : ""}`)
console.log(`notes.md: ${JSON.stringify(readFileSync(join(root, "notes.md"), "utf8"))}`)
rmSync(root, { recursive: true, force: true })
