/**
 * `@ugent/agentese`: every tool on a path (`world.tools.file.read`), one
 * `invoke` road (policy, trust, rate limits, loops, audit, tracing, result
 * budget, events), and its projections: the `ugent` CLI, the HTTP JSON API,
 * the MCP server and the `effect/ai` Toolkit; and the `Agent` that drives the
 * road with a model.
 *
 * @since 0.1.0
 */

/** @since 0.2.0 */
export * as Agent from "./Agent.ts"
/** @since 0.2.0 */
export * as AgentRuns from "./AgentRuns.ts"
/** @since 0.2.0 */
export * as Budget from "./Budget.ts"
/** @since 0.2.0 */
export * as Callers from "./Callers.ts"
/** @since 0.2.0 */
export * as Catalog from "./Catalog.ts"
/** @since 0.1.0 */
export * as Events from "./Events.ts"
/** @since 0.2.0 */
export * as Families from "./Families.ts"
/** @since 0.2.0 */
export * as Human from "./Human.ts"
/** @since 0.1.0 */
export * as Invoke from "./Invoke.ts"
/** @since 0.2.0 */
export * as Loop from "./Loop.ts"
/** @since 0.2.0 */
export * as Mounts from "./Mounts.ts"
/** @since 0.2.0 */
export * as Modes from "./self/Modes.ts"
/** @since 0.2.0 */
export * as ModelTool from "./ModelTool.ts"
/** @since 0.1.0 */
export * as Parse from "./Parse.ts"
/** @since 0.1.0 */
export * as Path from "./Path.ts"
/** @since 0.2.0 */
export * as Profile from "./Profile.ts"
/** @since 0.2.0 */
export * as Progress from "./Progress.ts"
/** @since 0.2.0 */
export * as Prompt from "./Prompt.ts"
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
/** @since 0.2.0 */
export * as Render from "./Render.ts"
/** @since 0.1.0 */
export * as Registry from "./Registry.ts"
/** @since 0.2.0 */
export * as Report from "./Report.ts"
/** @since 0.1.0 */
export * as Server from "./Server.ts"
/** @since 0.2.0 */
export * as Self from "./self/Self.ts"
/** @since 0.2.0 */
export * as Sessions from "./Sessions.ts"
/** @since 0.2.0 */
export * as SessionState from "./SessionState.ts"
/** @since 0.2.0 */
export * as State from "./State.ts"
/** @since 0.2.0 */
export * as Tasks from "./self/Tasks.ts"
/** @since 0.2.0 */
export * as Telemetry from "./Telemetry.ts"
