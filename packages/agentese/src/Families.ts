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
 * | `self.memory.read` / `list` | memory | L0 |
 *
 * @since 0.2.0
 */
import { Family } from "@ugent/core"
import { Files, Git, Search, Web } from "@ugent/tools"
import { Summarized } from "@ugent/wrappers"

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
}

/**
 * Every family a server serves by default: the built-in ones and the web
 * (`web.search` only when a search provider is configured).
 *
 * @category families
 * @since 0.2.0
 */
export const standard = (configuration: Configuration = {}) =>
  [...builtIn, Web.family({ allowHosts: configuration.allowHosts })] as const

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
