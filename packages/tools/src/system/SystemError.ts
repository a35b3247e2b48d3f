/**
 * The typed failures of the system tools, each saying what to do next: a run
 * id this server never started (or has forgotten), too many background runs
 * at once, and a sandbox that could not be set up for a run.
 *
 * @since 0.2.0
 */
import type { ToolError } from "@ugent/core"
import { Schema } from "effect"

/**
 * No run with this id was started by this server, or it finished long
 * enough ago to be forgotten. `system.output` and `system.kill` act only on
 * runs this server started.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { SystemError } from "@ugent/tools"
 * console.log(new SystemError.UnknownRun({ id: "run-1234" }).message)
 * // => No run with id run-1234 was started by this server (or it finished and was forgotten). Use the id a system.bash call returned; start a command with system.bash.
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class UnknownRun extends Schema.TaggedError<UnknownRun>()("UnknownRun", {
  id: Schema.String
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    return `No run with id ${this.id} was started by this server (or it finished and was forgotten). Use the id a system.bash call returned; start a command with system.bash.`
  }
}

/**
 * The limit of background runs running at once is reached.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { SystemError } from "@ugent/tools"
 * console.log(new SystemError.TooManyRuns({ running: ["run-a", "run-b"], limit: 2 }).message)
 * // => 2 background runs are already running (run-a, run-b), the limit. Read one with system.output and stop it with system.kill, or run the command in the foreground.
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class TooManyRuns extends Schema.TaggedError<TooManyRuns>()("TooManyRuns", {
  running: Schema.Array(Schema.String),
  limit: Schema.Int
}) {
  static readonly kind: ToolError.Kind = "rate_limited"
  override get message(): string {
    return `${this.running.length} background runs are already running (${this.running.join(", ")}), the limit. Read one with system.output and stop it with system.kill, or run the command in the foreground.`
  }
}

/**
 * The sandbox could not be set up for this run (its process-limit group
 * could not be made, or bubblewrap could not start). Nothing ran.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { SystemError } from "@ugent/tools"
 * console.log(new SystemError.SandboxFailed({ reason: "the process-limit group could not be created" }).message)
 * // => The sandbox could not be set up: the process-limit group could not be created. Nothing ran. Try again; if it persists, the operator should check the server's sandbox (bubblewrap, control groups).
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class SandboxFailed extends Schema.TaggedError<SandboxFailed>()("SandboxFailed", {
  reason: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `The sandbox could not be set up: ${this.reason}. Nothing ran. Try again; if it persists, the operator should check the server's sandbox (bubblewrap, control groups).`
  }
}
