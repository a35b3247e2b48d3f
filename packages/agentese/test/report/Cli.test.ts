/**
 * `ugent report`, the real binary in a child process: `--json` prints one
 * object with the report and where it was saved; without it, the Markdown's
 * body on stdout and where it was saved on stderr. With `UGENT_MODEL` the
 * model writes it (served by a local OpenAI-compatible replay server) within
 * its call budget; `--deterministic` keeps to the pipeline; a misconfigured
 * model fails before the first step in one line.
 */
import { existsSync, readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Report } from "@ugent/agentese"
import { Effect, Schema } from "effect"
import { type Answer, type Received, serve } from "../providers/fixture.ts"
import { onlyJson, ugent } from "../cli/fixture.ts"
import { emptyFolder, folder, hasGit, repository, TODO } from "./fixture.ts"

// Each run starts a Node process that loads the sources: slow on a loaded machine.
const slow = { timeout: 180_000 }

describe("ugent report", () => {
  it.skipIf(!hasGit)(
    "--json prints one object: the report (as the schema says) and the saved files",
    slow,
    async () => {
      const root = repository([
        {
          date: "2024-01-01T00:00:00Z",
          message: "First",
          files: { "package.json": JSON.stringify({ name: "cli-fixture" }), "src/a.ts": `// ${TODO}: x\n` }
        }
      ])
      const run = await ugent(["report", "--root", root, "--json"], {
        cwd: emptyFolder(),
        env: { UGENT_MODEL: "" }
      })
      assert.strictEqual(run.code, 0, run.stderr)
      const out = onlyJson(run) as { ok: boolean; report: unknown; saved: { markdown: string; json: string } }
      assert.isTrue(out.ok)
      const report = Schema.decodeUnknownSync(Report.Report)(out.report)
      assert.strictEqual(report.project, "cli-fixture")
      assert.strictEqual(report.mode, "deterministic")
      assert.isTrue(report.facts!.git.available)
      assert.strictEqual(report.facts!.todos.items[0]?.commit?.date.slice(0, 10), "2024-01-01")
      assert.deepStrictEqual(
        Schema.decodeUnknownSync(Report.Report)(JSON.parse(readFileSync(out.saved.json, "utf8"))),
        report
      )
      assert.strictEqual(readFileSync(out.saved.markdown, "utf8"), Report.markdown(report))
    }
  )

  it("prints the sections of a folder that is no repository, and where the report was saved", slow, async () => {
    const root = folder({ "pyproject.toml": '[project]\nname = "plain"\n', "plain/__init__.py": "" })
    const run = await ugent(["report", "--deterministic"], { cwd: root, env: { UGENT_MODEL: "openai:x" } })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.notInclude(run.stderr, "UGENT_MODEL")
    assert.isTrue(run.stdout.startsWith("# plain: project report\n"), run.stdout)
    for (const title of ["## Last active area", "## Current state", "## Suggested next steps", "## Based on"]) {
      assert.include(run.stdout, title)
    }
    assert.include(run.stdout, "Git facts are unavailable: No git repository at .: there is no .git there.")
    assert.notInclude(run.stdout, "toolCalls:")
    const saved = /report saved to (\S+\.md) and (\S+\.json)/.exec(run.stderr)
    assert.isNotNull(saved, run.stderr)
    assert.isTrue(existsSync(saved![1]!) && existsSync(saved![2]!))
    assert.isTrue(readFileSync(saved![1]!, "utf8").startsWith("---\nprotocol: project-resurrection\n"))
  })

  describe("with a model", () => {
    const clean = { OPENAI_API_KEY: "", OPENAI_BASE_URL: "", ANTHROPIC_API_KEY: "", ANTHROPIC_BASE_URL: "" }
    const completion = (message: Record<string, unknown>, finish: string) => ({
      id: "chatcmpl-report",
      object: "chat.completion",
      created: 1,
      model: "gpt-4o-mini",
      choices: [{ index: 0, message: { role: "assistant", refusal: null, ...message }, finish_reason: finish }],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }
    })
    const toolCalls = (calls: ReadonlyArray<readonly [string, Record<string, unknown>]>) =>
      completion(
        {
          content: null,
          tool_calls: calls.map(([name, args], i) => ({
            id: `call_${i}`,
            type: "function",
            function: { name, arguments: JSON.stringify(args) }
          }))
        },
        "tool_calls"
      )
    const section = (summary: string, points: ReadonlyArray<string> = []) => ({ summary, points })
    const sections = {
      lastActiveArea: section("The manifest.", ["`package.json`"]),
      currentState: section("A package named model-fixture."),
      nextSteps: section("Add tests."),
      basedOn: section("package.json, read once.")
    }
    /** The chat answers in turn, by the number of assistant messages already in the conversation. */
    const script =
      (answers: ReadonlyArray<unknown>) =>
      (request: Received): Answer => {
        if (request.method === "GET") return { json: { object: "list", data: [] } }
        const turn = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === "assistant").length
        return { json: answers[Math.min(turn, answers.length - 1)] }
      }

    it.live("the model follows the protocol through the road; the attribution is its calls, with their ids", () =>
      Effect.gen(function* () {
        const root = folder({ "package.json": JSON.stringify({ name: "model-fixture" }) })
        const server = yield* serve(
          script([
            toolCalls([
              ["world_tools_file_list", { path: "." }],
              ["world_tools_file_read", { path: "package.json" }]
            ]),
            // Prose around the JSON is tolerated: the last JSON object is the report.
            completion({ content: `Here it is:\n\`\`\`json\n${JSON.stringify(sections)}\n\`\`\`` }, "stop")
          ])
        )
        const run = yield* Effect.promise(() =>
          ugent(["report", "--root", root, "--json", "--stores", "memory"], {
            cwd: emptyFolder(),
            env: { ...clean, UGENT_MODEL: `openai-compatible:${server.url}/v1#gpt-4o-mini` }
          })
        )
        assert.strictEqual(run.code, 0, run.stderr)
        const out = onlyJson(run) as { ok: boolean; report: unknown }
        const report = Schema.decodeUnknownSync(Report.Report)(out.report)
        assert.strictEqual(report.mode, "model")
        assert.strictEqual(report.model, `openai-compatible:${server.url}/v1#gpt-4o-mini`)
        assert.deepStrictEqual(report.currentState, sections.currentState)
        assert.deepStrictEqual(
          report.attribution.toolCalls.map((c) => [c.path, c.ok]),
          [
            ["world.tools.file.list", true],
            ["world.tools.file.read", true]
          ]
        )
        assert.deepStrictEqual(
          report.attribution.filesRead.map((f) => f.path),
          ["package.json"]
        )
        assert.isTrue(report.attribution.toolCalls.every((c) => c.callId.length > 0))
        // The system prompt carries the protocol, and the offers are the caller's (L0: no writes).
        const first = server.received.find((r) => r.method === "POST")!.body
        assert.include(JSON.stringify(first.messages), "Project Resurrection")
        const offered = first.tools.map((t: { function: { name: string } }) => t.function.name)
        assert.include(offered, "world_tools_git_log")
        assert.notInclude(offered, "world_tools_file_write")
      }).pipe(Effect.scoped)
    )

    it.live(
      "the call budget holds: calls past --max-calls are not made, and a reply that stays malformed is an incomplete report",
      () =>
        Effect.gen(function* () {
          const root = folder({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" })
          const server = yield* serve(
            script([
              toolCalls([
                ["world_tools_file_read", { path: "a.txt" }],
                ["world_tools_file_read", { path: "b.txt" }],
                ["world_tools_file_read", { path: "c.txt" }]
              ]),
              completion({ content: "I looked at the files." }, "stop"),
              completion({ content: "Still prose, sorry." }, "stop")
            ])
          )
          const run = yield* Effect.promise(() =>
            ugent(["report", "--root", root, "--max-calls", "2", "--stores", "memory"], {
              cwd: emptyFolder(),
              env: { ...clean, UGENT_MODEL: `openai-compatible:${server.url}/v1#gpt-4o-mini` }
            })
          )
          assert.strictEqual(run.code, 0, run.stderr)
          assert.include(run.stdout, "Analysis incomplete")
          assert.match(run.stderr, /the report is incomplete: the model's report was not in the report's format/)
          // Two reads made; the third was refused before the road, and the model was told why.
          const second = server.received.filter((r) => r.method === "POST")[1]!.body
          const results = second.messages.filter((m: { role: string }) => m.role === "tool")
          assert.strictEqual(results.length, 3)
          assert.include(results[2].content, "CallBudgetSpent")
          const saved = JSON.parse(readFileSync(`${root}/.ugent/reports/latest.json`, "utf8"))
          assert.deepStrictEqual(
            saved.attribution.toolCalls.map((c: { input: string }) => c.input),
            ['{"path":"a.txt"}', '{"path":"b.txt"}']
          )
        }).pipe(Effect.scoped)
    )

    it.live(
      "the budget runs out: the report keeps the model's findings so far, with its steps, sizes, per-tool counts and a confidence",
      () =>
        Effect.gen(function* () {
          const root = folder({ "a.txt": "alpha\n", "b.txt": "b\n", "c.txt": "c\n" })
          const server = yield* serve(
            script([
              toolCalls([["world_tools_file_read", { path: "a.txt" }]]),
              toolCalls([["world_tools_file_read", { path: "b.txt" }]]),
              toolCalls([["world_tools_file_read", { path: "c.txt" }]]),
              // Told the budget ran out, the model writes what it found.
              completion({ content: JSON.stringify(sections) }, "stop")
            ])
          )
          const run = yield* Effect.promise(() =>
            ugent(["report", "--root", root, "--max-calls", "1", "--stores", "memory"], {
              cwd: emptyFolder(),
              env: { ...clean, UGENT_MODEL: `openai-compatible:${server.url}/v1#gpt-4o-mini` }
            })
          )
          assert.strictEqual(run.code, 0, run.stderr)
          // The steps on the terminal: Step n/of with its id and time, each call with its size and time.
          assert.match(
            run.stderr,
            /ugent: Step 1\/3 \(agent-[0-9a-f-]+\/1, \d+\.\d s\)\nugent: {3}file\.read\(a\.txt\) → \d+ B \(\d+ ms\)\n/
          )
          assert.match(run.stderr, /ugent: Step 2\/3 .*\nugent: {3}file\.read\(b\.txt\) → CallBudgetSpent: /)
          const saved = Schema.decodeUnknownSync(Report.Report)(
            JSON.parse(readFileSync(`${root}/.ugent/reports/latest.json`, "utf8"))
          )
          // The model's findings, not only the list of calls.
          assert.deepStrictEqual(saved.currentState, sections.currentState)
          assert.match(saved.incomplete!, /budget ran out \(its 3 steps were used up\); these are its findings so far/)
          const [read] = saved.attribution.toolCalls
          assert.strictEqual(saved.attribution.toolCalls.length, 1)
          assert.strictEqual(read!.step, 1)
          assert.match(read!.stepId!, /^agent-[0-9a-f-]+\/1$/)
          assert.isAbove(read!.resultBytes!, 0)
          assert.deepStrictEqual(saved.attribution.perTool, [
            { path: "world.tools.file.read", calls: 1, ok: 1, failed: 0 }
          ])
          assert.strictEqual(saved.attribution.confidence!.level, "medium")
          assert.include(run.stdout, "Confidence: medium. The findings were written when its 3 steps were used up")
        }).pipe(Effect.scoped)
    )

    it.live("with an Anthropic server: the same protocol over the Messages API", () =>
      Effect.gen(function* () {
        const root = folder({ "package.json": JSON.stringify({ name: "model-fixture" }) })
        const message = (content: ReadonlyArray<unknown>, stopReason: string) => ({
          id: "msg_report",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content,
          stop_reason: stopReason,
          stop_sequence: null,
          usage: { input_tokens: 200, output_tokens: 20 }
        })
        const server = yield* serve((request) => {
          if (request.method === "GET") return { json: { id: "claude-sonnet-4-5", type: "model" } }
          const answered = (request.body.messages as Array<{ role: string }>).filter((m) => m.role === "assistant")
          return {
            json:
              answered.length === 0
                ? message(
                    [
                      {
                        type: "tool_use",
                        id: "toolu_1",
                        name: "world_tools_file_read",
                        input: { path: "package.json" }
                      }
                    ],
                    "tool_use"
                  )
                : message([{ type: "text", text: JSON.stringify(sections) }], "end_turn")
          }
        })
        const run = yield* Effect.promise(() =>
          ugent(["report", "--root", root, "--json", "--stores", "memory"], {
            cwd: emptyFolder(),
            env: {
              ...clean,
              UGENT_MODEL: "anthropic:claude-sonnet-4-5",
              ANTHROPIC_API_KEY: "sk-ant-test",
              ANTHROPIC_BASE_URL: server.url
            }
          })
        )
        assert.strictEqual(run.code, 0, run.stderr)
        const report = Schema.decodeUnknownSync(Report.Report)((onlyJson(run) as { report: unknown }).report)
        assert.deepStrictEqual([report.mode, report.model], ["model", "anthropic:claude-sonnet-4-5"])
        assert.deepStrictEqual(report.nextSteps, sections.nextSteps)
        assert.deepStrictEqual(
          report.attribution.filesRead.map((f) => [f.path, f.via]),
          [["package.json", "world.tools.file.read"]]
        )
        const request = server.received.find((r) => r.method === "POST")!.body
        assert.include(
          request.tools.map((t: { name: string }) => t.name),
          "world_tools_git_status"
        )
      }).pipe(Effect.scoped)
    )

    it("a model that is not configured right fails before the first step, in one line, exit code 2", slow, async () => {
      const run = await ugent(["report", "--root", emptyFolder()], {
        cwd: emptyFolder(),
        env: { ...clean, UGENT_MODEL: "openai:gpt-4.1-mini" }
      })
      assert.strictEqual(run.code, 2, run.stderr)
      assert.strictEqual(run.stdout, "")
      assert.strictEqual(run.stderr.trimEnd().split("\n").length, 1, run.stderr)
      assert.match(run.stderr, /OPENAI_API_KEY/)
    })
  })
})
