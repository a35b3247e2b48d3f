/**
 * `@ugent/tools`: the workspace jail and the built-in tools (file, search,
 * git, …) that work inside it.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Workspace from "./Workspace.ts"
