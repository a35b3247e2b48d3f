/**
 * `system.output` reads a run started by `system.bash` in this server, as
 * it is now: its status, and its output so far (head and tail, at most
 * 30,000 characters). Ids of runs this server did not start are unknown.
 *
 * @since 0.2.0
 */
import { Tool } from "@ugent/core"
import { Effect, Schema } from "effect"
import * as Sandbox from "./Sandbox.ts"
import { UnknownRun } from "./SystemError.ts"

/**
 * @category schemas
 * @since 0.2.0
 */
export const Input = Schema.Struct({
  id: Schema.String.annotate({ description: "The id a system.bash call returned (run-…)." })
})

/**
 * @category models
 * @since 0.2.0
 */
export type Input = typeof Input.Type

/**
 * Everything `system.output` may fail with.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Failure = Schema.Union([UnknownRun])

/**
 * Reads a run's state and output so far.
 *
 * **Example** (Reading a background run)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { SystemBash, SystemOutput, Sandbox, Workspace } from "@ugent/tools"
 * import { NodeServices } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { chownSync, mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "output-"))
 * // A server running as root runs commands as the workspace's owner, never as root.
 * if (process.getuid?.() === 0) chownSync(root, 65534, 65534)
 * const layer = Sandbox.layer().pipe(Layer.provideMerge(Workspace.layer({ root })), Layer.provide(NodeServices.layer))
 * const program = Effect.gen(function* () {
 *   const started = yield* SystemBash.bash.run({ command: "echo started; sleep 0.2; echo done", background: true })
 *   yield* Effect.sleep("1 second")
 *   const read = yield* SystemOutput.output.run({ id: started.id })
 *   return [started.status, read.status, read.stdout]
 * })
 * console.log(await Effect.runPromise(Effect.scoped(program.pipe(Effect.provide([layer, Trust.grant(3)])))))
 * // => [ 'running', 'exited', 'started\ndone\n' ]
 * ```
 *
 * @category tools
 * @since 0.2.0
 */
export const output = Tool.make({
  name: "system.output",
  description:
    "Read a run started by system.bash (background or not) by its id: status (running, exited, timed-out, killed), exit code, and stdout and stderr so far (at most 30,000 characters, head and tail kept).",
  input: Input,
  output: Sandbox.Run,
  failure: Failure,
  trust: 3,
  effects: { idempotent: true },
  run: ({ id }) => Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.output(id))
})
