/**
 * The tool families a server serves by default, one line each. A family is
 * one folder that exports its tools (see `Family` in `@ugent/core`); to
 * serve another, add it to a server's `families` option (or to this list).
 *
 * | path | family | trust |
 * |---|---|---|
 * | `world.tools.file.read` / `list` / `glob` | file | L0 |
 * | `world.tools.file.write` / `edit` | file | L1 (L2 outside the writable globs) |
 * | `world.tools.search.grep` | search | L0 |
 * | `world.tools.git.status` / `log` / `diff` / `blame` / `show` | git | L0 |
 * | `world.tools.web.fetch` / `search` | web | L0 (calls the network) |
 * | `world.tools.system.bash` / `output` / `kill` | system | L3 (a recipe's `shell` lowers plain commands) |
 * | `self.memory.read` / `list` | memory | L0 |
 * | `self.tools.task.create` / `update` / `list` | self | L0 |
 * | `self.tools.mode.plan` / `execute` | self | L0 |
 * | `self.tools.clarify` | self | L0 |
 * | `world.tools.model.summarize` / `extract` | model (only with a model: `Server.Options.model`) | L0 (calls the network) |
 *
 * @since 0.2.0
 */
import { Family } from "@ugent/core"
import { Files, Git, Sandbox, Search, System, Web } from "@ugent/tools"
import { Sandboxed, Summarized } from "@ugent/wrappers"
import * as ModelTool from "./ModelTool.ts"
import * as Self from "./self/Self.ts"

/**
 * The `self.memory` family: results kept in working memory (by the result
 * budget, or the `Summarized` wrapper), read back in parts.
 *
 * @category families
 * @since 0.2.0
 */
export const memory = Family.make({
  name: "memory",
  prefix: "self.memory",
  tools: { read: Summarized.read, list: Summarized.list }
})

/**
 * What the configurable families take from the server's configuration.
 *
 * @category models
 * @since 0.2.0
 */
export interface Configuration {
  /** Hosts the web tools may reach although private or local (the recipe's `allowHosts`). */
  readonly allowHosts?: ReadonlyArray<string> | undefined
  /** Plain commands the shell runs below L3 (the recipe's `shell`). */
  readonly shell?: System.Options["shell"]
  /** Whether shell commands may use the network (the recipe's `shellNetwork`, or the operator's). */
  readonly shellNetwork?: boolean | undefined
  /** The operator's consent to a shell without a sandbox where none can be made (L3 callers only). */
  readonly unsandboxed?: typeof Sandbox.unsandboxedConsent | undefined
}

/**
 * Every family a server serves by default: the built-in ones, the web
 * (`web.search` only when a search provider is configured), the sandboxed
 * shell (`system.*`, only where a sandbox can be made) and the model steps
 * (`model.*`, only when the server has a model).
 *
 * @category families
 * @since 0.2.0
 */
export const standard = (configuration: Configuration = {}) =>
  [
    ...builtIn,
    Web.family({ allowHosts: configuration.allowHosts }),
    Self.family,
    System.family({
      shell: configuration.shell,
      network: configuration.shellNetwork === true,
      unsandboxed: configuration.unsandboxed,
      // The text policy is a fast, friendly first refusal; the sandbox is the boundary.
      textPolicy: Sandboxed.textPolicy({ allow: "all" })
    }),
    ModelTool.family
  ] as const

/**
 * The built-in families that need no configuration, in the order they are registered.
 *
 * **Example** (Their names)
 * ```ts
 * import { Families } from "@ugent/agentese"
 * console.log(Families.builtIn.map((f) => f.name))
 * // => [ 'file', 'search', 'git', 'memory' ]
 * ```
 *
 * @category families
 * @since 0.2.0
 */
export const builtIn = [Files.family, Search.family, Git.family, memory] as const
