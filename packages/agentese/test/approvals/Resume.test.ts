/**
 * `ugent agent` waiting on an approval (issue 29): the run ends telling
 * which approval it waits on and keeps its conversation in the workspace;
 * after `ugent approve`, `ugent agent --resume <run>` goes on with it in a
 * new process, and the approved write runs without asking. The model is a
 * local OpenAI-compatible server; everything else is the real binary.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ugent, workspace } from "../cli/fixture.ts"
import { type Received, serve } from "../providers/fixture.ts"

const clean = {
  UGENT_MODEL: "",
  OPENAI_API_KEY: "",
  OPENAI_BASE_URL: "",
  ANTHROPIC_API_KEY: "",
  ANTHROPIC_BASE_URL: ""
}

const completion = (message: Record<string, unknown>, finish: string) => ({
  id: "chatcmpl-resume",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", refusal: null, ...message }, finish_reason: finish }],
  usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }
})

const writeCall = completion(
  {
    content: null,
    tool_calls: [
      {
        id: "call_write",
        type: "function",
        function: {
          name: "world_tools_file_write",
          arguments: JSON.stringify({ path: "n.txt", content: "approved bytes\n" })
        }
      }
    ]
  },
  "tool_calls"
)

/** After a person's word the model writes; after a tool's result it answers with what the result said. */
const model = (request: Received) => {
  if (request.method === "GET") return { json: { object: "list", data: [] } }
  const messages = request.body.messages as ReadonlyArray<{ role: string; content: string | null }>
  const last = messages.at(-1)!
  if (last.role !== "tool") return { json: writeCall }
  const waits = (last.content ?? "").includes("ApprovalPending")
  return { json: completion({ content: waits ? "It waits for your approval." : "Written." }, "stop") }
}

describe("ugent agent --resume", () => {
  it.live("a run waiting on an approval is kept; after ugent approve, --resume goes on and the write runs", () =>
    Effect.gen(function* () {
      const root = workspace()
      writeFileSync(join(root, "recipe.json"), JSON.stringify({ requireApproval: ["world.tools.file.write"] }))
      const server = yield* serve(model)
      const env = { ...clean, UGENT_MODEL: `openai-compatible:${server.url}/v1#gpt-4o-mini` }
      const common = ["--root", root, "--trust", "L1", "--recipe", join(root, "recipe.json")]
      const first = yield* Effect.promise(() => ugent(["agent", "Write n.txt.", ...common], { cwd: root, env }))
      assert.strictEqual(first.code, 0, first.stderr)
      assert.strictEqual(first.stdout, "It waits for your approval.\n")
      const said =
        /the run waits on (ap-[\w-]+): answer with `ugent approve \1`.*`ugent agent --resume (run-[0-9a-f]{12})`/.exec(
          first.stderr
        )
      assert.isNotNull(said, JSON.stringify(first.stderr))
      const [, approval, run] = said!
      assert.isFalse(existsSync(join(root, "n.txt")))
      const approved = yield* Effect.promise(() => ugent(["approve", approval!, "--root", root], { cwd: root, env }))
      assert.strictEqual(approved.code, 0, approved.stderr)
      const second = yield* Effect.promise(() => ugent(["agent", "--resume", run!, ...common], { cwd: root, env }))
      assert.strictEqual(second.code, 0, second.stderr)
      assert.strictEqual(second.stdout, "Written.\n")
      assert.strictEqual(readFileSync(join(root, "n.txt"), "utf8"), "approved bytes\n")
      // The resumed run carried the first run's conversation: the model saw the pending result.
      const last = server.received.at(-1)!.body.messages as ReadonlyArray<{ role: string; content: string | null }>
      assert.isTrue(last.some((m) => m.role === "tool" && (m.content ?? "").includes("ApprovalPending")))
    }).pipe(Effect.scoped)
  )

  it.live("bad input: an unknown run, a name that is no run id, and no task at all are usage errors", () =>
    Effect.gen(function* () {
      const root = workspace()
      const env = { ...clean, UGENT_MODEL: "openai-compatible:http://127.0.0.1:9/v1#gpt-4o-mini" }
      const unknown = yield* Effect.promise(() =>
        ugent(["agent", "--resume", "run-000000000000", "--root", root], { cwd: root, env })
      )
      assert.strictEqual(unknown.code, 2)
      assert.match(unknown.stderr, /No waiting agent run run-000000000000: there is no such run/)
      const traversal = yield* Effect.promise(() =>
        ugent(["agent", "--resume", "../../etc/passwd", "--root", root], { cwd: root, env })
      )
      assert.strictEqual(traversal.code, 2)
      assert.match(traversal.stderr, /a run id looks like run-/)
      // threat 45: a FIFO in the runs' place is refused at once, never read (it would block the process).
      mkdirSync(join(root, ".ugent", "runs"), { recursive: true })
      execFileSync("mkfifo", [join(root, ".ugent", "runs", "run-00000000000f.json")])
      const fifo = yield* Effect.promise(() =>
        ugent(["agent", "--resume", "run-00000000000f", "--root", root], { cwd: root, env })
      )
      assert.strictEqual(fifo.code, 2)
      assert.match(fifo.stderr, /No waiting agent run run-00000000000f/)
      const none = yield* Effect.promise(() => ugent(["agent", "--root", root], { cwd: root, env }))
      assert.strictEqual(none.code, 2)
      assert.match(none.stderr, /No task/)
    })
  )
})
