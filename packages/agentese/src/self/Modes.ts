/**
 * Plan mode, for modal workflows: a caller that enters it (`self.tools.mode.plan`)
 * may read and think, but every tool that writes files, runs a shell or calls
 * the network is refused for that session until it leaves
 * (`self.tools.mode.execute`). The road enforces it on every call, on every
 * projection, pipelines included.
 *
 * @since 0.2.0
 */
import { Observer, Tool, type ToolError } from "@ugent/core"
import { Context, Effect, Layer, Schema } from "effect"
import * as Sessions from "../Sessions.ts"

/**
 * A call refused because its session is in plan mode.
 *
 * @category errors
 * @since 0.2.0
 */
export class PlanMode extends Schema.TaggedError<PlanMode>()("PlanMode", {
  path: Schema.String
}) {
  static readonly kind: ToolError.Kind = "denied"
  override get message(): string {
    return `${this.path} was not run: this session is in plan mode, where nothing that writes files, runs a shell or calls the network runs. Finish the plan, then call self.tools.mode.execute to leave plan mode.`
  }
}

/**
 * @category models
 * @since 0.2.0
 */
export type Mode = "plan" | "execute"

/**
 * @category models
 * @since 0.2.0
 */
export interface ModesShape {
  /** The mode of a session; where the state is shared (a room), a store that does not answer is a failure. */
  readonly get: (key: string) => Effect.Effect<Mode, Sessions.SessionStoreUnavailable>
  readonly set: (key: string, mode: Mode) => Effect.Effect<void, Sessions.SessionStoreUnavailable>
}

/**
 * The mode of each session (or caller, outside a session).
 *
 * @category services
 * @since 0.2.0
 */
export class Modes extends Context.Service<Modes, ModesShape>()("ugent/agentese/Modes") {}

/**
 * Modes in memory, bounded to the newest 10,000 sessions.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerMemory: Layer.Layer<Modes> = Layer.sync(Modes, () => {
  const modes = new Map<string, Mode>()
  return Modes.of({
    get: (key) => Effect.sync(() => modes.get(key) ?? "execute"),
    set: (key, mode) =>
      Effect.sync(() => {
        modes.delete(key)
        if (mode === "plan") modes.set(key, mode)
        if (modes.size > 10_000) modes.delete(modes.keys().next().value!)
      })
  })
})

/**
 * The key of the current call's mode: its session, else its caller.
 *
 * @category keys
 * @since 0.2.0
 */
export const currentKey: Effect.Effect<string> = Effect.gen(function* () {
  const session = yield* Sessions.Current
  const observer = yield* Effect.serviceOption(Observer.Observer)
  const id = observer._tag === "Some" ? observer.value.id : "anonymous"
  return session === undefined ? `caller:${id}` : `session:${id}:${session}`
})

/**
 * Whether a tool is one plan mode refuses: it writes files, runs a shell or
 * calls the network.
 *
 * @category policy
 * @since 0.2.0
 */
export const refusedInPlanMode = (tool: Tool.Any): boolean =>
  tool.effects.writesFs || tool.effects.callsShell || tool.effects.callsNetwork || tool.effects.irreversible

const Output = Schema.Struct({
  mode: Schema.Literals(["plan", "execute"]),
  message: Schema.String
})

/**
 * `mode.plan`: enters plan mode for the current session.
 *
 * @category tools
 * @since 0.2.0
 */
export const plan = Tool.make({
  name: "mode.plan",
  description:
    "Enter plan mode: reads stay allowed; writes, shell and network calls are refused until self.tools.mode.execute.",
  input: Schema.Struct({}),
  output: Output,
  failure: Sessions.SessionStoreUnavailable,
  run: () =>
    Effect.gen(function* () {
      const modes = yield* Modes
      yield* modes.set(yield* currentKey, "plan")
      return {
        mode: "plan" as const,
        message: "Plan mode: read, search and plan; writes, shell and network are refused until mode.execute."
      }
    })
})

/**
 * `mode.execute`: leaves plan mode.
 *
 * @category tools
 * @since 0.2.0
 */
export const execute = Tool.make({
  name: "mode.execute",
  description: "Leave plan mode: writes, shell and network calls run again (within your trust level).",
  input: Schema.Struct({}),
  output: Output,
  failure: Sessions.SessionStoreUnavailable,
  run: () =>
    Effect.gen(function* () {
      const modes = yield* Modes
      yield* modes.set(yield* currentKey, "execute")
      return { mode: "execute" as const, message: "Execute mode: every tool you are offered runs again." }
    })
})
