/**
 * The agent loop's own overhead per step. A scripted model asks for one
 * `file.read` of a 12-byte file per step for 20 steps, then answers. Ours is
 * `Agent.run` (the system prompt of the offers, the toolkit handed to the
 * model, budgets, events, the conversation); the baseline is the loop an
 * author would write by hand over the same model and the same road
 * (`generateText` with the caller's `Toolkit.fromInvoker`, whose handlers
 * call `Invoke.invoke`; the calls and results appended to the prompt). Both run on the invoke bench's road, so the calls cost the
 * same; the difference per step is what the loop adds.
 */
import { Agent, Toolkit } from "@ugent/agentese"
import { Scripted } from "@ugent/agentese/providers"
import { rmSync } from "node:fs"
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

export default {
  name: "agent",
  description: `The agent loop's overhead per step: Agent.run vs a hand-written loop, ${steps} steps of one file.read each, scripted model`,
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
            return [
              row("one step (model answer + one file.read)", perStep(hand), perStep(ours), "ms/step", {
                target: "ours − baseline ≤ 1 ms/step",
                note: `overhead ${(perStep(ours) - perStep(hand)).toFixed(3)} ms/step`
              })
            ]
          })
        ) as Effect.Effect<ReadonlyArray<ReturnType<typeof row>>, unknown, never>
      )
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }
} satisfies Bench
