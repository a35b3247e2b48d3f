/**
 * Type-level guarantee of sub-agents, checked by `tsc`: delegation never
 * widens. A sub-agent made with `Agent.asTool` at a level needs that level's
 * capability, so a parent granted less cannot run it.
 */
import { Agent } from "@ugent/agentese"
import { Trust } from "@ugent/core"
import { Effect } from "effect"

const reviewer = Agent.asTool({ trust: 2, deny: ["world.tools.system.*"] })
const asked = reviewer.run({ task: "Review the last commit." })

// A parent at L2 (or more) may delegate at L2.
export const atL2: Effect.Effect<unknown, unknown, Agent.Services> = asked.pipe(Effect.provide(Trust.grant(2)))
export const atL3: Effect.Effect<unknown, unknown, Agent.Services> = asked.pipe(Effect.provide(Trust.grant(3)))

// @ts-expect-error a parent granted L1 cannot run a child at L2
export const atL1: Effect.Effect<unknown, unknown, Agent.Services> = asked.pipe(Effect.provide(Trust.grant(1)))

// A child at L0 runs for any parent.
export const reader: Effect.Effect<unknown, unknown, Agent.Services> = Agent.asTool({ trust: 0 })
  .run({ task: "Summarize README.md." })
  .pipe(Effect.provide(Trust.grant(0)))
