/**
 * A `Node` registers a family of tools under a path prefix: the `world.tools`
 * node holds `file.read`, `search.grep`, `git.log` … as
 * `world.tools.file.read`, `world.tools.search.grep`, `world.tools.git.log`.
 * Building a node captures the services its tools need (the workspace, the
 * git backend), so the registry holds tools that need nothing but their
 * trust capability.
 *
 * @since 0.1.0
 */
import type { Tool, Trust } from "@ugent/core"
import { Tool as T } from "@ugent/core"
import { Context, Effect } from "effect"
import { isPath } from "./Path.ts"

/**
 * A tool closed over its services: it needs only trust capabilities.
 *
 * @category models
 * @since 0.1.0
 */
export type Closed = Tool.Tool<unknown, unknown, unknown, Trust.Capability>

/**
 * A registered tool.
 *
 * @category models
 * @since 0.1.0
 */
export interface Entry {
  readonly path: string
  readonly node: string
  readonly tool: Closed
}

/**
 * @category models
 * @since 0.1.0
 */
export interface Node {
  readonly prefix: string
  readonly entries: ReadonlyArray<Entry>
}

/**
 * Builds a node from a record of tools keyed by their name under the prefix.
 * The tools' services (everything but trust capabilities) are taken from the
 * context where the node is built; a call's own context wins over them.
 *
 * **Example** (A node of one tool)
 * ```ts
 * import { Node } from "@ugent/agentese"
 * import { Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const upper = Tool.fromFunction({ name: "text.upper", f: (s: string) => s.toUpperCase() })
 * const node = Effect.runSync(Node.make("world.tools", { "text.upper": upper }))
 * console.log(node.entries.map((e) => e.path))
 * // => [ 'world.tools.text.upper' ]
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <const T extends Readonly<Record<string, Tool.Any>>>(
  prefix: string,
  tools: T
): Effect.Effect<Node, never, Exclude<Tool.Requirements<T[keyof T]>, Trust.Capability>> =>
  Effect.map(Effect.context<Exclude<Tool.Requirements<T[keyof T]>, Trust.Capability>>(), (captured) => ({
    prefix,
    entries: Object.entries(tools).map(([name, tool]) => {
      const path = `${prefix}.${name}`
      if (!isPath(path)) throw new Error(`Node.make: "${path}" is not a well-formed path`)
      const closed = T.wrap(
        tool,
        (run) => (a) =>
          Effect.updateContext(
            run(a),
            // The captured context holds every service the tools need but the capabilities, which the call
            // brings; the record erased each tool's own R, so the merged context is typed as the erased R.
            (outer: Context.Context<Trust.Capability>) => Context.merge(captured, outer) as Context.Context<unknown>
          )
      )
      return { path, node: prefix, tool: closed as Closed }
    })
  }))
