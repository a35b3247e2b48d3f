/**
 * Progress of a long call, reported to whoever made it: a tool reads the
 * current reporter and tells how far it is (a mounted server's progress
 * notifications are passed on this way), and the projection that serves the
 * call decides where the reports go (MCP: `notifications/progress` to a
 * client that asked with a `progressToken`). By default nobody listens.
 *
 * @since 0.2.0
 */
import { Context, Effect } from "effect"

/**
 * One report: how far (a number that grows), of how much if known, and a
 * sentence.
 *
 * @category models
 * @since 0.2.0
 */
export interface Report {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/**
 * Where a call's reports go.
 *
 * @category models
 * @since 0.2.0
 */
export type Reporter = (report: Report) => Effect.Effect<void>

/**
 * The reporter that drops every report.
 *
 * @category constants
 * @since 0.2.0
 */
export const none: Reporter = () => Effect.void

/**
 * The reporter of the current call (the road carries the caller's into the
 * tool's run).
 *
 * **Example** (A tool that reports, heard by its caller)
 * ```ts
 * import { Progress } from "@ugent/agentese"
 * import { Effect } from "effect"
 * const heard: Array<number> = []
 * const work = Effect.flatMap(Progress.Current, (report) => report({ progress: 1, total: 2 }))
 * Effect.runSync(Effect.provideService(work, Progress.Current, (r) => Effect.sync(() => heard.push(r.progress))))
 * console.log(heard)
 * // => [ 1 ]
 * ```
 *
 * @category services
 * @since 0.2.0
 */
export const Current = Context.Reference<Reporter>("ugent/agentese/Progress", { defaultValue: () => none })
