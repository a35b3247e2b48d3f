/**
 * Type-level guarantees of tool families, checked by `tsc`: a server serves
 * only families whose needs it meets.
 */
import { Server } from "@ugent/agentese"
import { Family, Tool } from "@ugent/core"
import { Workspace } from "@ugent/tools"
import { Context, Effect, Layer, Schema } from "effect"

class Clock2 extends Context.Service<Clock2, { readonly now: number }>()("types/Clock2") {}

const needsClock = Tool.make({
  name: "time.now",
  description: "The time.",
  input: Schema.Struct({}),
  output: Schema.Number,
  run: () => Effect.map(Clock2, (c) => c.now)
})

const needsWorkspace = Tool.make({
  name: "ws.root",
  description: "The root.",
  input: Schema.Struct({}),
  output: Schema.String,
  run: () => Effect.map(Workspace.Workspace, (w) => w.root)
})

// A family whose service the host does not provide does not compile.
const unserved = Family.make({ name: "time", prefix: "self.tools", tools: { "time.now": needsClock } })
// @ts-expect-error the server provides no Clock2
Server.layer({ root: "/tmp", families: [unserved] })

// Its own layer meets the need.
const served = Family.make({
  name: "time",
  prefix: "self.tools",
  tools: { "time.now": needsClock },
  layer: Layer.succeed(Clock2, { now: 0 })
})
Server.layer({ root: "/tmp", families: [served] })

// The host's workspace is there for every family.
Server.layer({
  root: "/tmp",
  families: [Family.make({ name: "ws", prefix: "self.tools", tools: { "ws.root": needsWorkspace } })]
})
