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
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Family } from "@ugent/core"
import { Effect, Layer } from "effect"
import * as SystemBash from "./Bash.ts"
import * as SystemKill from "./Kill.ts"
import * as SystemOutput from "./Output.ts"
import * as Sandbox from "./Sandbox.ts"

/**
 * The options of the family: the sandbox's (network, the unsandboxed
 * opt-out, an advisory text policy, read-only toolchain paths, extra
 * environment variables, limits).
 *
 * @category models
 * @since 0.2.0
 */
export interface Options extends Sandbox.Options {
  /**
   * Plain commands `system.bash` may run below L3 (the recipe's `shell`):
   * such a call needs the allowance's level; any other needs L3.
   */
  readonly shell?: SystemBash.ShellAllowance | undefined
}

const lines = (text: string) => (text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0))

const tell = (o: Sandbox.Run) => ({
  summary: `${o.id} ${o.status === "exited" ? `exited with ${o.exitCode}` : o.status} after ${o.durationMillis} ms: ${lines(o.stdout)} lines of stdout, ${lines(o.stderr)} of stderr${o.truncated ? " (cut)" : ""}`,
  next: "narrow the command (| head, | tail, grep) to see less at a time"
})

/**
 * The family, with its sandbox built from `options` (the default: no
 * network, no text policy, and no shell where no sandbox can be made). A
 * server registers it with one line; the host provides the `Workspace` (the
 * family brings its own process spawner).
 *
 * **Example** (The tools a server offers)
 * ```ts
 * import { System, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { chownSync, mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "system-"))
 * // A server running as root runs commands as the workspace's owner, never as root.
 * if (process.getuid?.() === 0) chownSync(root, 65534, 65534)
 * const family = System.family({ network: false })
 * const members = await Effect.runPromise(Effect.scoped(family.build.pipe(Effect.provide(Workspace.layer({ root })))))
 * console.log(family.prefix, Object.keys(members))
 * // => world.tools [ 'system.bash', 'system.output', 'system.kill' ]
 * ```
 *
 * @category families
 * @since 0.2.0
 */
export const family = (options: Options = {}) =>
  Family.effect({
    name: "system",
    prefix: "world.tools",
    layer: Sandbox.layer(options).pipe(Layer.provide(NodeServices.layer)),
    tools: Effect.gen(function* () {
      const sandbox = yield* Sandbox.Sandbox
      const tools = {
        "system.bash": SystemBash.make(sandbox.isolation),
        "system.output": SystemOutput.output,
        "system.kill": SystemKill.kill
      }
      if (sandbox.isolation.kind === "none") {
        // Debug, not a warning: every one-shot command would print it; `--log-level debug` shows why.
        yield* Effect.logDebug(`world.tools.system.* is not offered: ${sandbox.isolation.reason}`)
        return {} as Partial<typeof tools>
      }
      if (sandbox.isolation.kind === "unsandboxed") yield* Effect.logWarning(sandbox.isolation.reason)
      return tools as Partial<typeof tools>
    }),
    present: { "system.bash": tell, "system.output": tell, "system.kill": tell },
    timeouts: { "system.bash": (input) => (input.timeoutSeconds ?? SystemBash.defaultTimeoutSeconds) * 1000 },
    levels: Effect.map(Sandbox.Sandbox, (sandbox) => {
      const shell = options.shell
      if (shell === undefined) return {}
      return {
        "system.bash": {
          min: shell.level,
          of: (input: { readonly command: string; readonly background?: boolean | undefined }) =>
            SystemBash.requiredLevel(input, shell, sandbox.isolation)
        }
      }
    })
  })
