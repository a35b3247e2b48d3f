/**
 * The agent loop's own overhead per step, and the reads of one response run
 * side by side. A scripted model asks for one
 * `file.read` of a 12-byte file per step for 20 steps, then answers. Ours is
 * `Agent.run` (the system prompt of the offers, the toolkit handed to the
 * model, budgets, events, the conversation); the baseline is the loop an
 * author would write by hand over the same model and the same road
 * (`generateText` with the caller's `Toolkit.fromInvoker`, whose handlers
 * call `Invoke.invoke`; the calls and results appended to the prompt). Both run on the invoke bench's road, so the calls cost the
 * same; the difference per step is what the loop adds.
 *
 * A turn of five reads (one response asking for five calls that only read)
 * against a turn of the longest of them alone: with the reads side by side
 * the turn takes about as long as its longest read, not the sum. Measured on
 * reads that wait (a mounted MCP server's read-only tool, server-everything's
 * `trigger-long-running-operation`, 20 to 60 ms each) and on `file.read`s of
 * five files of 15 to 75 KB, whose work is CPU in one thread.
 */
import { Agent, Toolkit } from "@ugent/agentese"
import { Scripted } from "@ugent/agentese/providers"
import { rmSync, writeFileSync } from "node:fs"
import { loadavg } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Layer } from "effect"
import { Prompt as AiPrompt, LanguageModel } from "effect/ai"
import { type Bench, row, wallMs } from "./Bench.ts"
import { benchRoad, benchWorkspace } from "./invoke.bench.ts"

const steps = 20

/** A step per tool result so far: a read until `steps - 1` results, then the answer. */
const model = Scripted.layer((request) => {
  const results = request.prompt.content.filter((m) => m.role === "tool").length
  return results < steps - 1
    ? Scripted.calls([{ name: "world_tools_file_read", params: { path: "a.txt" }, id: `c${results}` }])
    : Scripted.text("done")
})

const byHand = Effect.gen(function* () {
  // The README's effect/ai route: the caller's toolkit, whose handlers take the road; effect/ai runs the calls.
  const toolkit = yield* Toolkit.fromInvoker
  let prompt = AiPrompt.make("Read a.txt, again and again.")
  for (;;) {
    const response = yield* LanguageModel.generateText({ prompt, toolkit })
    if (response.toolCalls.length === 0) return response.text
    if (response.toolResults.some((r) => r.isFailure)) return yield* Effect.die(new Error("a call failed"))
    prompt = AiPrompt.concat(prompt, AiPrompt.fromResponseParts(response.content))
  }
})

const looped = Effect.flatMap(Agent.run({ prompt: "Read a.txt, again and again.", maxSteps: steps }), (result) =>
  result._tag === "Complete" && result.steps.every((s) => s.calls.every((c) => c.outcome?.ok === true))
    ? Effect.succeed(result.text)
    : Effect.die(new Error(`the run did not complete: ${JSON.stringify(result).slice(0, 300)}`))
)

const everything = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url)
)

/** One turn: a response that asks for `calls` (all at once), then the answer. */
const turn = (calls: ReadonlyArray<Scripted.Call>) =>
  Agent.run({ prompt: "Read them.", maxSteps: 2 }).pipe(
    Effect.provide(
      Scripted.layer((request) =>
        request.prompt.content.some((m) => m.role === "tool") ? Scripted.text("done") : Scripted.calls(calls)
      )
    ),
    Effect.flatMap((result) =>
      result._tag === "Complete" && result.steps[0]!.calls.every((c) => c.outcome?.ok === true)
        ? Effect.succeed(result.text)
        : Effect.die(new Error(`the turn did not complete: ${JSON.stringify(result).slice(0, 400)}`))
    )
  )

const load = () =>
  `load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`

/** A turn of five reads against a turn of the longest alone (and each alone, for the sum). */
const sideBySide = (
  name: string,
  reads: ReadonlyArray<Scripted.Call>,
  context: import("effect").Context.Context<never>
) =>
  Effect.promise(async () => {
    const measure = (calls: ReadonlyArray<Scripted.Call>) =>
      wallMs(() => Effect.runPromise(Effect.provideContext(turn(calls), context) as Effect.Effect<string>), 9)
    const alone: Array<number> = []
    for (const read of reads) alone.push(await measure([read]))
    const five = await measure(reads)
    const longest = Math.max(...alone)
    const sum = alone.reduce((a, b) => a + b, 0)
    return row(name, longest, five, "ms/turn", {
      target: "≤ 1.3 (the longest read alone)",
      note: `each alone ${alone.map((a) => a.toFixed(1)).join(", ")} ms (sum ${sum.toFixed(1)} = ${(sum / longest).toFixed(2)}× the longest); ${load()}`
    })
  })

export default {
  name: "agent",
  description: `The agent loop's overhead per step (Agent.run vs a hand-written loop, ${steps} steps of one file.read each), and a turn of five reads side by side against its longest read alone; scripted model`,
  run: async () => {
    const root = benchWorkspace()
    try {
      const measure = (program: Effect.Effect<string, unknown, never>) => wallMs(() => Effect.runPromise(program), 9)
      return await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const context = yield* Layer.build(Layer.merge(benchRoad(root), model))
            const hand = yield* Effect.promise(() =>
              measure(Effect.provideContext(byHand, context) as Effect.Effect<string, unknown, never>)
            )
            const ours = yield* Effect.promise(() =>
              measure(Effect.provideContext(looped, context) as Effect.Effect<string, unknown, never>)
            )
            const perStep = (ms: number) => ms / steps
            // Five files of 15 to 75 KB, and a road with server-everything mounted.
            for (let i = 1; i <= 5; i++) writeFileSync(join(root, `r${i}.txt`), `${"x".repeat(49)}\n`.repeat(300 * i))
            const mounted = yield* Layer.build(
              Layer.merge(
                benchRoad(root, {
                  mounts: [{ name: "every", spec: { command: process.execPath, args: [everything] } }]
                }),
                model
              )
            )
            const waits = yield* sideBySide(
              "a turn of 5 reads of a mounted server (each waits 20-60 ms)",
              [20, 30, 40, 50, 60].map((ms, i) => ({
                name: "world_mcp_every_trigger-long-running-operation",
                params: { duration: ms / 1000, steps: 1 },
                id: `w${i}`
              })),
              mounted
            )
            const files = yield* sideBySide(
              "a turn of 5 file.reads (15-75 KB, CPU in one thread)",
              [1, 2, 3, 4, 5].map((i) => ({
                name: "world_tools_file_read",
                params: { path: `r${i}.txt` },
                id: `f${i}`
              })),
              context
            )
            return [
              row("one step (model answer + one file.read)", perStep(hand), perStep(ours), "ms/step", {
                target: "ours − baseline ≤ 1 ms/step",
                note: `overhead ${(perStep(ours) - perStep(hand)).toFixed(3)} ms/step`
              }),
              waits,
              files
            ]
          })
        ) as Effect.Effect<ReadonlyArray<ReturnType<typeof row>>, unknown, never>
      )
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }
} satisfies Bench
