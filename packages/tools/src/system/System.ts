/**
 * The `system` family: `world.tools.system.bash`, `system.output` and
 * `system.kill`, over one {@link Sandbox.Sandbox} built with the family.
 * Where no sandbox can be made (no bubblewrap, or user namespaces refused)
 * the family offers no tool at all and logs why, unless the operator passed
 * the opt-out `unsandboxed: "I-understand-this-runs-unsandboxed"`; then the
 * tools are offered, and `system.bash` says in its description that it runs
 * unsandboxed.
 *
 * @since 0.2.0
 */
import { Family } from "@ugent/core"
import { Effect } from "effect"
import * as Bash from "./Bash.ts"
import * as Kill from "./Kill.ts"
import * as Output from "./Output.ts"
import * as Sandbox from "./Sandbox.ts"

/**
 * The options of the family: the sandbox's (network, the unsandboxed
 * opt-out, an advisory text policy, read-only toolchain paths, extra
 * environment variables, limits).
 *
 * @category models
 * @since 0.2.0
 */
export type Options = Sandbox.Options

/**
 * The family, built with its sandbox. A server registers it with one line;
 * the host provides the `Workspace` and a `ChildProcessSpawner`
 * (`NodeServices.layer`).
 *
 * **Example** (The tools a server offers)
 * ```ts
 * import { Family } from "@ugent/core"
 * import { System, Workspace } from "@ugent/tools"
 * import { NodeServices } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "system-"))
 * const family = System.family({ network: false })
 * const host = Layer.merge(Workspace.layer({ root }), NodeServices.layer)
 * const tools = await Effect.runPromise(Effect.scoped(family.build.pipe(Effect.provide(host))))
 * console.log(family.prefix, Object.keys(tools))
 * // => world.tools [ 'system.bash', 'system.output', 'system.kill' ]
 * ```
 *
 * @category families
 * @since 0.2.0
 */
export const family = (options?: Options) =>
  Family.effect({
    name: "system",
    prefix: "world.tools",
    layer: Sandbox.layer(options),
    tools: Effect.gen(function* () {
      const sandbox = yield* Sandbox.Sandbox
      const tools = {
        "system.bash": Bash.make(sandbox.isolation),
        "system.output": Output.output,
        "system.kill": Kill.kill
      }
      if (sandbox.isolation.kind === "none") {
        yield* Effect.logWarning(`world.tools.system.* is not offered: ${sandbox.isolation.reason}`)
        return {} as Partial<typeof tools>
      }
      if (sandbox.isolation.kind === "unsandboxed") yield* Effect.logWarning(sandbox.isolation.reason)
      return tools as Partial<typeof tools>
    })
  })
