/**
 * The cost of the `invoke` road (resolve, recipe, loop detector, trust gate,
 * rate limits, audit, trace, breaker, timeout, events, JSON in and out) on a
 * cheap call: `file.read` of a 12-byte file, against the same tool's `run`
 * with the same services (the workspace, an L0 grant), and against the JSON
 * boundary alone (`Boundary.runJson`: decode, run, encode). Calls run in a
 * loop inside one Effect, so the runtime's start-up is not counted.
 *
 * The road is `Server.layer` with memory stores, rate limits no call reaches
 * and a loop detector that never refuses, so their work is counted and no
 * call is refused; every call is checked to have succeeded.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Invoke, Server } from "@ugent/agentese"
import { Boundary, Trust } from "@ugent/core"
import { Read, Workspace } from "@ugent/tools"
import { Effect, Layer } from "effect"
import { type Bench, row, wallMs } from "./Bench.ts"

/**
 * The road of `Server.layer` over a workspace: memory stores, an L0 caller
 * allowed every path, the `shared` profile's rate limiters with limits no
 * call reaches (the same token-bucket work, nothing refused), and a loop
 * detector that never refuses (the same bookkeeping). Shared with the HTTP
 * bench.
 */
export const benchRoad = (root: string, extra: Partial<Server.Options> = {}) =>
  Server.layer({
    ...extra,
    root,
    stores: "memory",
    profile: "shared",
    limits: {
      global: [{ limit: 1e9, window: "1 minute" }],
      caller: [{ limit: 1e9, window: "1 minute" }],
      tool: [["world.tools.*", [{ limit: 1e9, window: "1 minute" }]]]
    },
    loop: { count: 1e9, windowMillis: 60_000 }
  })

/** A temp workspace with one 12-byte file. */
export const benchWorkspace = () => {
  const root = mkdtempSync(join(tmpdir(), "ugent-bench-"))
  writeFileSync(join(root, "a.txt"), "hello\nworld\n")
  return root
}

/** Microseconds per call: median of 7 batches (after a warm-up) of `n` calls inside one Effect. */
const usPerCall = async <R>(
  call: (i: number) => Effect.Effect<unknown, unknown, R>,
  layer: Layer.Layer<R, unknown>,
  n: number
) => {
  let next = 0
  const batch = Effect.gen(function* () {
    for (let i = 0; i < n; i++) yield* call(next++)
  })
  // One layer for every batch, as a server would run it.
  return Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* Layer.build(layer)
        const ms = yield* Effect.promise(() =>
          wallMs(() => Effect.runPromise(Effect.provideContext(batch, context)), 7)
        )
        return (ms * 1000) / n
      })
    ) as Effect.Effect<number, unknown, never>
  )
}

export default {
  name: "invoke",
  description:
    "The invoke road's overhead per call: file.read of a 12 B file vs the tool's run and vs the JSON boundary",
  run: async () => {
    const root = benchWorkspace()
    try {
      // Fewer than 10,000 distinct calls in all: the loop detector's own housekeeping starts above that.
      // Each call differs by its limit (the file has one line), so no two are a loop.
      const n = 1000
      const direct = Layer.mergeAll(Workspace.layer({ root }), Trust.grant(0))
      const tool = await usPerCall(() => Read.read.run({ path: "a.txt" }), direct, n)
      const boundary = await usPerCall(
        () =>
          Effect.flatMap(Boundary.runJson(Read.read, { path: "a.txt" }), (r) =>
            r.ok ? Effect.void : Effect.die(new Error(JSON.stringify(r)))
          ),
        direct,
        n
      )
      const road = await usPerCall(
        (i) =>
          Effect.flatMap(
            Invoke.invoke({ path: "world.tools.file.read", input: { path: "a.txt", limit: 1 + i } }),
            (o) => (o.ok ? Effect.void : Effect.die(new Error(`a call was refused: ${JSON.stringify(o.error)}`)))
          ),
        benchRoad(root),
        n
      )
      return [
        row("file.read (12 B): Invoker.invoke vs tool.run", tool, road, "µs/call", {
          note: "the road's whole cost: JSON in and out, recipe, loop check, gate, limits, audit, trace, breaker, timeout, events"
        }),
        row("file.read (12 B): Invoker.invoke vs Boundary.runJson", boundary, road, "µs/call", {
          note: "the road beyond decoding and encoding JSON"
        })
      ]
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }
} satisfies Bench
