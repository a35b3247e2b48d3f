/**
 * The five-minute tour as a program, in two acts.
 *
 * 1. Three small tools of our own composed into a pipeline, checked by the
 *    compiler at every seam, gated by trust, and run for two callers, one of
 *    whom may not run the write at the end.
 * 2. The built-in tools on the AGENTESE road, over a temporary workspace:
 *    list what a caller is offered, read a file (which returns a proof),
 *    write without a proof (refused), edit with it (accepted), search, and
 *    run the calls a model wrote in its reply.
 *
 * Run it with `npm run quickstart`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Invoke, Server } from "@ugent/agentese"
import { Boundary, Observer, Tool, ToolError, Trust } from "@ugent/core"
import { Effect, Schema } from "effect"

// 1. Tools: typed morphisms with schemas, a trust level and declared effects.
const Text = Schema.Struct({ text: Schema.String })
const Stats = Schema.Struct({ words: Schema.Int, longest: Schema.String })

const tokenize = Tool.fromFunction({
  name: "text.tokenize",
  input: Text,
  output: Schema.Array(Schema.String),
  f: ({ text }: { readonly text: string }) => text.split(/\W+/).filter((w) => w !== "")
})

const stats = Tool.make({
  name: "text.stats",
  description: "Counts words and finds the longest.",
  input: Schema.Array(Schema.String),
  output: Stats,
  run: (words) =>
    Effect.succeed({ words: words.length, longest: words.reduce((a, b) => (b.length > a.length ? b : a), "") })
})

const notes: Array<string> = []
const saveNote = Tool.make({
  name: "notes.save",
  description: "Saves a one-line note about the stats.",
  trust: 1,
  effects: { writesFs: true, idempotent: false },
  input: Stats,
  output: Schema.Struct({ saved: Schema.String }),
  run: ({ words, longest }) =>
    Effect.sync(() => {
      const line = `${words} words, longest "${longest}"`
      notes.push(line)
      return { saved: line }
    })
})

// 2. Compose: `tokenize >> stats >> notes.save`. Swap two steps and it no longer compiles.
const summarize = Tool.pipeline(tokenize, stats, saveNote)

// 3. Gate: the pipeline needs L1 (it writes); the gate checks the caller at run time.
const gated = Trust.gate(summarize)

const callAs = (id: string, trust: Trust.TrustLevel) =>
  Boundary.runJson(gated, { text: "Tools compose like functions, and the compiler checks every seam." }).pipe(
    Effect.provide(Observer.layer({ id, trust }))
  )

const program = Effect.gen(function* () {
  console.log(`pipeline: ${summarize.name}`)
  console.log(`trust: L${summarize.trust}, writes: ${summarize.effects.writesFs}\n`)

  const reader = yield* callAs("reader", 0)
  console.log("as an L0 reader:", JSON.stringify(reader, null, 2))

  const writer = yield* callAs("writer", 1)
  console.log("\nas an L1 writer:", JSON.stringify(writer, null, 2))

  console.log("\nnotes saved:", notes)
  if (reader.ok || !writer.ok || reader.error._tag !== "TrustDenied") {
    return yield* Effect.die(new Error("quickstart: unexpected outcome"))
  }
  console.log(`\n${ToolError.messageOf(reader.error)}`)
})

// ---------------------------------------------------------------------------
// Act 2: the built-in tools on the AGENTESE road
// ---------------------------------------------------------------------------

const show = (label: string, outcome: Invoke.Outcome) =>
  console.log(
    `${label}:`,
    outcome.ok
      ? `ok ${JSON.stringify(outcome.result).slice(0, 150)}…`
      : `refused ${outcome.error._tag}: ${outcome.error.message}`
  )

const road = Effect.gen(function* () {
  const invoker = yield* Invoke.Invoker
  const offered = yield* invoker.list
  console.log(`\n--- act 2: the AGENTESE road ---\noffered to this L1 caller: ${offered.map((o) => o.path).join(", ")}`)

  const read = yield* Invoke.invoke({ path: "world.tools.file.read", input: { path: "notes.md" } })
  show("read notes.md", read)
  const proof = read.ok ? (read.result as { readonly proof: string }).proof : ""

  show(
    "overwrite without a proof",
    yield* Invoke.invoke({ path: "world.tools.file.write", input: { path: "notes.md", content: "gone" } })
  )
  const edit = yield* Invoke.invoke({
    path: "world.tools.file.edit",
    input: { path: "notes.md", proof, oldText: "- [ ] compose", newText: "- [x] compose" }
  })
  show("edit with the proof", edit)
  show("read .env", yield* Invoke.invoke({ path: "world.tools.file.read", input: { path: ".env" } }))
  show(
    "grep for TODO",
    yield* Invoke.invoke({ path: "world.tools.search.grep", input: { pattern: "todo", outputMode: "content" } })
  )

  const reply = [
    "I will check the tasks and list the files.",
    "EXECUTE: world.tools.file.list --path=.",
    '<tool_call>{"tool": "world_tools_file_glob", "params": {"pattern": "**/*.md"}}</tool_call>'
  ].join("\n")
  const outcomes = yield* invoker.invokeText(reply)
  console.log(
    `a model's reply made ${outcomes.length} calls: ${outcomes.map((o) => `${o.path} ${o.ok ? "ok" : "refused"}`).join("; ")}`
  )
  if (!read.ok || !edit.ok) return yield* Effect.die(new Error("quickstart: the road refused a permitted call"))
})

const root = mkdtempSync(join(tmpdir(), "ugent-quickstart-"))
writeFileSync(join(root, "notes.md"), "# Notes\n\n- [ ] compose tools\n- [ ] TODO: gate the writes\n")
writeFileSync(join(root, ".env"), "API_KEY=not-for-models\n")

Effect.runPromise(
  program.pipe(
    Effect.andThen(
      road.pipe(
        Effect.provide(
          Server.layer({
            root,
            trust: 1,
            observerId: "quickstart",
            stores: "memory",
            // The room's policy: no git here, and a higher rate than the default 10 calls a minute (burst 3).
            recipe: { deny: ["world.tools.git.*"], rateLimits: { perMinute: 60 } }
          })
        )
      )
    ),
    Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
  )
).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
