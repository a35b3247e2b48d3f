/**
 * A pipeline of N steps built with `Tool.pipeline` against the same work done
 * by a hand-written `Effect.flatMap` chain, by plain `async` functions, and by
 * LangChain.js's `RunnableSequence` (what a user would otherwise pick), for
 * N = 10, 1,000, 10,000. Pure steps are fused by the pipeline; effectful steps
 * (each returning an Effect) are measured too, against the same flatMap chain.
 */
import { RunnableLambda, RunnableSequence } from "@langchain/core/runnables"
import { Tool, Trust } from "@ugent/core"
import { Effect, Layer, Schema } from "effect"
import { type Bench, nsPerOp, type Row, row } from "./Bench.ts"

const step = (x: number) => (x * 31 + 7) % 1_000_003

const handWritten = (n: number) => (a: number) => {
  let eff = Effect.succeed(a)
  for (let i = 0; i < n; i++) eff = Effect.flatMap(eff, (x) => Effect.succeed(step(x)))
  return eff
}

const pureTool = Tool.fromFunction({ name: "step", input: Schema.Number, output: Schema.Number, f: step })
const effectTool = Tool.make({
  name: "stepE",
  description: "One effectful step.",
  input: Schema.Number,
  output: Schema.Number,
  run: (x) => Effect.succeed(step(x))
})

const asyncStep = async (x: number) => step(x)
const asyncChain = (n: number) => async (a: number) => {
  let x = a
  for (let i = 0; i < n; i++) x = await asyncStep(x)
  return x
}

const iterationsFor = (n: number) => Math.max(3, Math.round(200_000 / n))

const bench: Bench = {
  name: "pipeline",
  description:
    "Tool.pipeline of N steps vs hand-written Effect.flatMap, async functions and LangChain RunnableSequence",
  run: async () => {
    const rows: Array<Row> = []
    const perStep: Record<string, number> = {}
    for (const n of [10, 1_000, 10_000]) {
      const iterations = iterationsFor(n)
      const pure = Tool.pipeline(pureTool, ...Array.from({ length: n - 1 }, () => pureTool))
      const effectful = Tool.pipeline(effectTool, ...Array.from({ length: n - 1 }, () => effectTool))
      const base = handWritten(n)
      const grant = Effect.runSync(Layer.build(Trust.grant(0)).pipe(Effect.scoped))
      const runEffectful = (a: number) => Effect.runSync(Effect.provideContext(effectful.run(a), grant))
      // Same results before timing anything.
      const expected = Effect.runSync(base(1))
      if (Effect.runSync(pure.run(1)) !== expected || runEffectful(1) !== expected) {
        throw new Error("pipeline results differ from the baseline")
      }
      const baseNs = await nsPerOp(() => Effect.runSync(base(1)), { iterations })
      const pureNs = await nsPerOp(() => Effect.runSync(pure.run(1)), { iterations })
      const effNs = await nsPerOp(() => runEffectful(1), { iterations })
      const asyncNs = await nsPerOp(() => asyncChain(n)(1), { iterations, async: true })
      perStep[`pure${n}`] = pureNs / n
      perStep[`eff${n}`] = effNs / n
      rows.push(row(`N=${n} pure steps vs Effect.flatMap`, baseNs / n, pureNs / n, "ns/step", { target: "≤ 1.3" }))
      rows.push(row(`N=${n} effectful steps vs Effect.flatMap`, baseNs / n, effNs / n, "ns/step", { target: "≤ 1.3" }))
      rows.push(row(`N=${n} pure steps vs async functions`, asyncNs / n, pureNs / n, "ns/step"))
      if (n <= 1_000) {
        // RunnableSequence.from types its argument as a [first, ...middle, last] tuple; n same-typed steps are one.
        const seq = RunnableSequence.from(
          Array.from({ length: n }, () => RunnableLambda.from(step)) as unknown as [
            RunnableLambda<number, number>,
            RunnableLambda<number, number>
          ]
        )
        if ((await seq.invoke(1)) !== expected) throw new Error("LangChain result differs")
        const lcNs = await nsPerOp(() => seq.invoke(1), {
          iterations: Math.max(3, Math.round(iterations / 50)),
          samples: 3,
          async: true
        })
        rows.push(
          row(`N=${n} pure steps vs LangChain RunnableSequence`, lcNs / n, pureNs / n, "ns/step", { target: "≤ 0.01" })
        )
      }
    }
    rows.push(
      row(
        "linearity: pure N=10,000 / N=1,000 (total time)",
        perStep.pure1000! * 1_000,
        perStep.pure10000! * 10_000,
        "ns",
        {
          target: "≤ 12",
          note: "ratio = cost(10k) / cost(1k)"
        }
      )
    )
    rows.push(
      row(
        "linearity: effectful N=10,000 / N=1,000 (total time)",
        perStep.eff1000! * 1_000,
        perStep.eff10000! * 10_000,
        "ns",
        {
          target: "≤ 12",
          note: "ratio = cost(10k) / cost(1k)"
        }
      )
    )
    return rows
  }
}

export default bench
