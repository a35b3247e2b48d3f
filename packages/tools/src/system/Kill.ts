/**
 * `system.kill` stops a run started by `system.bash` in this server: its
 * whole process tree (under bubblewrap, every process of its PID namespace,
 * those that left its process group or session too), and returns its final
 * state and output. Killing a run that has ended returns its state as it is.
 * Ids of runs this server did not start are unknown: nothing else can be
 * signalled.
 *
 * @since 0.2.0
 */
import { Tool } from "@ugent/core"
import { Effect } from "effect"
import * as SystemOutput from "./Output.ts"
import * as Sandbox from "./Sandbox.ts"

/**
 * The run's id, as `system.output` takes it.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Input: typeof SystemOutput.Input = SystemOutput.Input

/**
 * @category models
 * @since 0.2.0
 */
export type Input = SystemOutput.Input

/**
 * Everything `system.kill` may fail with: an unknown run, as for `system.output`.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Failure: typeof SystemOutput.Failure = SystemOutput.Failure

/**
 * Kills a run's whole process tree.
 *
 * **Example** (Stopping a background run)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { SystemBash, SystemKill, Sandbox, Workspace } from "@ugent/tools"
 * import { NodeServices } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { chownSync, mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "kill-"))
 * // A server running as root runs commands as the workspace's owner, never as root.
 * if (process.getuid?.() === 0) chownSync(root, 65534, 65534)
 * const layer = Sandbox.layer().pipe(Layer.provideMerge(Workspace.layer({ root })), Layer.provide(NodeServices.layer))
 * const program = Effect.gen(function* () {
 *   const started = yield* SystemBash.bash.run({ command: "sleep 300", background: true })
 *   const killed = yield* SystemKill.kill.run({ id: started.id })
 *   const unknown = yield* Effect.flip(SystemKill.kill.run({ id: "run-00000000" }))
 *   return [killed.status, unknown._tag]
 * })
 * console.log(await Effect.runPromise(Effect.scoped(program.pipe(Effect.provide([layer, Trust.grant(3)])))))
 * // => [ 'killed', 'UnknownRun' ]
 * ```
 *
 * @category tools
 * @since 0.2.0
 */
export const kill = Tool.make({
  name: "system.kill",
  description:
    "Stop a run started by system.bash (by its id): its whole process tree is killed. Returns the run's final status and output. Only runs this server started can be stopped.",
  input: Input,
  output: Sandbox.Run,
  failure: Failure,
  trust: 3,
  effects: { idempotent: true },
  run: ({ id }) => Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.kill(id))
})
