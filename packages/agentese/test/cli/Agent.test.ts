/**
 * `ugent agent`, end to end: the real binary in a child process, its model
 * named by `UGENT_MODEL` and served by a local HTTP server that replays an
 * OpenAI Chat Completions or an Anthropic Messages conversation (a call of
 * `world_tools_file_read`, then an answer). A misconfigured model fails
 * before the first step with one line and exit code 2.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Answer, closedPort, type Received, serve } from "../providers/fixture.ts"
import { onlyJson, ugent, workspace } from "./fixture.ts"

/** No key or model from the test's own environment reaches the child. */
const clean = {
  UGENT_MODEL: "",
  OPENAI_API_KEY: "",
  OPENAI_BASE_URL: "",
  ANTHROPIC_API_KEY: "",
  ANTHROPIC_BASE_URL: ""
}

const completion = (message: Record<string, unknown>, finish: string) => ({
  id: "chatcmpl-agent",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", refusal: null, ...message }, finish_reason: finish }],
  usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }
})

const readCall = (path: string) =>
  completion(
    {
      content: null,
      tool_calls: [
        {
          id: "call_read",
          type: "function",
          function: { name: "world_tools_file_read", arguments: JSON.stringify({ path }) }
        }
      ]
    },
    "tool_calls"
  )

/** An OpenAI-compatible server: the models list for the preflight, then the chat answers in turn. */
const openAi =
  (answers: ReadonlyArray<unknown>) =>
  (request: Received): Answer => {
    if (request.method === "GET" && request.path === "/v1/models") return { json: { object: "list", data: [] } }
    const turn = openAiTurns(request)
    return { json: answers[Math.min(turn, answers.length - 1)] }
  }

/** Which turn a chat request is: the number of tool results it carries. */
const openAiTurns = (request: Received): number =>
  (request.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool").length

const anthropicMessage = (content: ReadonlyArray<unknown>, stopReason: string) => ({
  id: "msg_agent",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content,
  stop_reason: stopReason,
  stop_sequence: null,
  usage: { input_tokens: 200, output_tokens: 20 }
})

describe("ugent agent", () => {
  it.live("ghost alternatives: each call of a response records the others, shown by ugent stats", () =>
    Effect.gen(function* () {
      const root = workspace({ "notes.md": "alpha\n", "todo.md": "tea\n" })
      const both = completion(
        {
          content: null,
          tool_calls: ["notes.md", "todo.md"].map((path, i) => ({
            id: `call_${i}`,
            type: "function",
            function: { name: "world_tools_file_read", arguments: JSON.stringify({ path }) }
          }))
        },
        "tool_calls"
      )
      const server = yield* serve(openAi([both, completion({ content: "alpha, tea." }, "stop")]))
      const run = yield* Effect.promise(() =>
        ugent(["agent", "Read both notes", "--root", root], {
          cwd: root,
          env: { ...clean, UGENT_MODEL: `openai-compatible:${server.url}/v1#gpt-4o-mini` }
        })
      )
      assert.strictEqual(run.code, 0, run.stderr)
      const stats = yield* Effect.promise(() => ugent(["stats", "--root", root, "--since", "all"], { cwd: root }))
      assert.strictEqual(stats.code, 0, stats.stderr)
      assert.match(
        stats.stdout,
        /\{"path":"notes\.md"\} +→ Read 1 line from notes\.md .* · also considered: file\.read\(todo\.md\)/
      )
      assert.match(
        stats.stdout,
        /\{"path":"todo\.md"\} +→ Read 1 line from todo\.md .* · also considered: file\.read\(notes\.md\)/
      )
    }).pipe(Effect.scoped)
  )

  it.live("with an OpenAI-compatible server: reads the file through the road, prints each step, answers", () =>
    Effect.gen(function* () {
      const root = workspace({ "notes.md": "alpha\nbeta\n" })
      const server = yield* serve(
        openAi([readCall("notes.md"), completion({ content: "notes.md says alpha and beta." }, "stop")])
      )
      const run = yield* Effect.promise(() =>
        ugent(["agent", "What does notes.md say?", "--root", root, "--stores", "memory"], {
          cwd: root,
          env: { ...clean, UGENT_MODEL: `openai-compatible:${server.url}/v1#gpt-4o-mini` }
        })
      )
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(run.stdout, "notes.md says alpha and beta.\n")
      // The step as the documents show it: its number of the budget, its id and time, each call's size and time.
      assert.match(
        run.stderr,
        /ugent: Step 1\/10 \(agent-[0-9a-f-]+\/1, \d+\.\d s\)\nugent: {3}file\.read\(notes\.md\) → \d+ B \(\d+ ms\)\n/
      )
      // The preflight, then two turns; the first offers the caller's paths after a system prompt.
      assert.deepStrictEqual(
        server.received.map((r) => `${r.method} ${r.path}`),
        ["GET /v1/models", "POST /v1/chat/completions", "POST /v1/chat/completions"]
      )
      const first = server.received[1]!.body
      assert.strictEqual(first.messages[0].role, "system")
      const offered = first.tools.map((t: { function: { name: string } }) => t.function.name)
      assert.include(offered, "world_tools_file_read")
      assert.notInclude(offered, "world_tools_file_write")
      const result = server.received[2]!.body.messages.find((m: { role: string }) => m.role === "tool")
      assert.strictEqual(result.tool_call_id, "call_read")
      assert.include(result.content, "alpha")
    }).pipe(Effect.scoped)
  )

  it.live("with an Anthropic server: --json prints the whole transcript as one object", () =>
    Effect.gen(function* () {
      const root = workspace({ "notes.md": "alpha\n" })
      const server = yield* serve((request) => {
        if (request.method === "GET") return { json: { id: "claude-sonnet-4-5", type: "model" } }
        const results = (request.body.messages as Array<{ role: string; content: unknown }>).filter(
          (m) =>
            m.role === "user" &&
            Array.isArray(m.content) &&
            m.content.some((b: { type?: string }) => b.type === "tool_result")
        ).length
        return {
          json:
            results === 0
              ? anthropicMessage(
                  [
                    { type: "text", text: "Let me read it." },
                    { type: "tool_use", id: "toolu_1", name: "world_tools_file_read", input: { path: "notes.md" } }
                  ],
                  "tool_use"
                )
              : anthropicMessage([{ type: "text", text: "It says alpha." }], "end_turn")
        }
      })
      const run = yield* Effect.promise(() =>
        ugent(["agent", "Read notes.md", "--root", root, "--stores", "memory", "--json"], {
          cwd: root,
          env: {
            ...clean,
            UGENT_MODEL: "anthropic:claude-sonnet-4-5",
            ANTHROPIC_API_KEY: "sk-ant-test",
            ANTHROPIC_BASE_URL: server.url
          }
        })
      )
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(run.stderr, "")
      const transcript = onlyJson(run) as {
        ok: boolean
        status: string
        text: string
        usage: { inputTokens: number; outputTokens: number }
        steps: Array<{ text: string; calls: Array<{ name: string; path: string; outcome: { ok: boolean } | null }> }>
      }
      assert.deepStrictEqual([transcript.ok, transcript.status, transcript.text], [true, "complete", "It says alpha."])
      assert.deepStrictEqual(transcript.usage, { inputTokens: 400, outputTokens: 40 })
      assert.strictEqual(transcript.steps[0]!.text, "Let me read it.")
      assert.deepStrictEqual(
        transcript.steps[0]!.calls.map((c) => [c.name, c.path, c.outcome?.ok]),
        [["world_tools_file_read", "world.tools.file.read", true]]
      )
      assert.strictEqual(server.received[0]!.path, "/v1/models/claude-sonnet-4-5")
      const second = server.received[2]!.body.messages.at(-1)
      assert.strictEqual(second.content[0].type, "tool_result")
      assert.include(second.content[0].content, "alpha")
    }).pipe(Effect.scoped)
  )

  it.live(
    "a budget that runs out: the answer is incomplete, says what is missing, exit code 1",
    () =>
      Effect.gen(function* () {
        const root = workspace({ "notes.md": "alpha\n" })
        const server = yield* serve(openAi([readCall("notes.md")]))
        const env = { ...clean, UGENT_MODEL: `openai-compatible:${server.url}/v1#gpt-4o-mini` }
        const run = yield* Effect.promise(() =>
          ugent(["agent", "Loop", "--root", root, "--stores", "memory", "--steps", "2"], { cwd: root, env })
        )
        assert.strictEqual(run.code, 1, run.stderr)
        assert.include(
          run.stderr,
          'ugent: Incomplete: the budget of 2 steps ran out before the model answered. It last asked for world.tools.file.read {"path":"notes.md"}.'
        )
        const json = yield* Effect.promise(() =>
          ugent(["agent", "Loop", "--root", root, "--stores", "memory", "--steps", "1", "--json"], { cwd: root, env })
        )
        assert.strictEqual(json.code, 1)
        const transcript = onlyJson(json) as { ok: boolean; missing: unknown }
        assert.isFalse(transcript.ok)
        assert.deepStrictEqual(transcript.missing, { budget: "steps", limit: 1, used: 1 })
      }).pipe(Effect.scoped),
    { timeout: 90_000 }
  )

  it.live(
    "a misconfigured model fails before the first step: one line, exit code 2",
    () =>
      Effect.gen(function* () {
        const root = workspace()
        const port = yield* closedPort
        const unauthorized = yield* serve(() => ({
          status: 401,
          json: { error: { message: "Incorrect API key provided", type: "invalid_request_error" } }
        }))
        const cases: ReadonlyArray<readonly [Record<string, string>, RegExp]> = [
          [{}, /^ugent: No model is configured: set UGENT_MODEL=/],
          [{ UGENT_MODEL: "gemini:pro" }, /^ugent: UGENT_MODEL=gemini:pro names an unknown provider "gemini"/],
          [{ UGENT_MODEL: "anthropic:claude-sonnet-4-5" }, /needs an API key: set ANTHROPIC_API_KEY$/],
          [
            { UGENT_MODEL: `openai-compatible:http://127.0.0.1:${port}/v1#llama3.2` },
            /^ugent: Cannot reach the model server at http:\/\/127\.0\.0\.1:\d+\/v1 .*: start the server/
          ],
          [
            {
              UGENT_MODEL: "openai:gpt-4o-mini",
              OPENAI_API_KEY: "sk-wrong",
              OPENAI_BASE_URL: `${unauthorized.url}/v1`
            },
            /rejecting the API key: set OPENAI_API_KEY to a valid API key$/
          ]
        ]
        for (const [env, expected] of cases) {
          const run = yield* Effect.promise(() =>
            ugent(["agent", "Read notes.md", "--root", root, "--stores", "memory"], {
              cwd: root,
              env: { ...clean, ...env }
            })
          )
          assert.strictEqual(run.code, 2, `${JSON.stringify(env)}: ${run.stderr}`)
          assert.strictEqual(run.stdout, "")
          const lines = run.stderr.trimEnd().split("\n")
          assert.strictEqual(lines.length, 1, run.stderr)
          assert.match(lines[0]!, expected)
          assert.notInclude(run.stderr, "sk-wrong")
        }
        // Only the preflight reached the server that rejects the key: no step was made.
        assert.deepStrictEqual(
          unauthorized.received.map((r) => r.method),
          ["GET"]
        )
        const json = yield* Effect.promise(() =>
          ugent(["agent", "x", "--root", root, "--json"], { cwd: root, env: { ...clean, UGENT_MODEL: "gemini:pro" } })
        )
        assert.strictEqual(json.code, 2)
        assert.deepStrictEqual((onlyJson(json) as { kind?: string }).kind, "model")
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )
})
