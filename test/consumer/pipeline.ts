import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Invoke, Server } from "@ugent/agentese"
import { Tool, Trust } from "@ugent/core"
import { CategoryTests, Report, RuleSet } from "@ugent/laws"
import { Read, Workspace } from "@ugent/tools"
import { Traced, TraceStore } from "@ugent/wrappers"
import { Effect, Layer, Schema } from "effect"

const root = mkdtempSync(join(tmpdir(), "ugent-"))
writeFileSync(join(root, "notes.md"), "# Notes\nTools compose like functions.\n")

// A tool of your own, checked against the category laws.
const shout = Tool.fromFunction({
  name: "text.shout",
  input: Schema.String,
  output: Schema.String,
  f: (s: string) => s.toUpperCase()
})
const reports = await Effect.runPromise(
  RuleSet.check("text.shout", CategoryTests.category({ tool: shout }), { runs: 20 })
)
console.log("laws hold:", reports.every(Report.isPassed))

// A traced pipeline: read a file inside the workspace jail, then summarize what was read.
const summary = Tool.fromFunction({
  name: "text.summary",
  input: Read.Output,
  output: Schema.Struct({ path: Schema.String, lines: Schema.Int }),
  f: (read: Read.Output) => ({ path: read.path, lines: read.totalLines })
})
const summarize = Traced(Tool.pipeline(Read.read, summary), { path: "notes.summary" })
// @ts-expect-error: the seams are checked: text.summary takes what file.read returns, not a string.
Tool.pipeline(shout, summary)
const services = Layer.mergeAll(Workspace.layer({ root }), TraceStore.layerMemory(), Trust.grant(0))
console.log("pipeline:", await Effect.runPromise(summarize.run({ path: "notes.md" }).pipe(Effect.provide(services))))

// The same read on the AGENTESE road (policy, trust, rate limits, audit), as the CLI, HTTP and MCP call it.
const outcome = await Effect.runPromise(
  Invoke.invoke({ path: "world.tools.file.read", input: { path: "notes.md" } }).pipe(
    Effect.provide(Server.layer({ root, stores: "memory" }))
  )
)
console.log("road:", outcome.ok ? (outcome.result as Read.Output).totalLines : outcome.error._tag)
