/**
 * `@ugent/agentese`: every tool on a path (`world.tools.file.read`), one
 * `invoke` road (policy, trust, rate limits, audit, tracing, events), and
 * its projections: the `ugent` CLI, the HTTP JSON API, the MCP server and the
 * `effect/ai` Toolkit.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Events from "./Events.ts"
/** @since 0.1.0 */
export * as Invoke from "./Invoke.ts"
/** @since 0.1.0 */
export * as Node from "./Node.ts"
/** @since 0.1.0 */
export * as Nodes from "./Nodes.ts"
/** @since 0.1.0 */
export * as Parse from "./Parse.ts"
/** @since 0.1.0 */
export * as Path from "./Path.ts"
/** @since 0.1.0 */
export * as Cli from "./projections/Cli.ts"
/** @since 0.1.0 */
export * as Http from "./projections/Http.ts"
/** @since 0.1.0 */
export * as Mcp from "./projections/Mcp.ts"
/** @since 0.1.0 */
export * as Toolkit from "./projections/Toolkit.ts"
/** @since 0.1.0 */
export * as Recipe from "./Recipe.ts"
/** @since 0.1.0 */
export * as Registry from "./Registry.ts"
/** @since 0.1.0 */
export * as Server from "./Server.ts"
