/**
 * `@ugent/core`: the tool algebra. A `Tool<A, B, E, R>` is a typed Effect
 * morphism; tools compose, are gated by trust levels that live in the type
 * system, and write only with a `ReadProof`.
 *
 * @since 0.1.0
 */

// First: an old Node gets one line, before anything that needs a newer one is loaded.
import "./internal/node.ts"

/** @since 0.1.0 */
export * as Boundary from "./Boundary.ts"
/** @since 0.1.0 */
export * as Changes from "./Changes.ts"
/** @since 0.2.0 */
export * as Family from "./Family.ts"
/** @since 0.1.0 */
export * as Observer from "./Observer.ts"
/** @since 0.1.0 */
export * as ReadProof from "./ReadProof.ts"
/** @since 0.2.0 */
export * as Secrets from "./Secrets.ts"
/** @since 0.1.0 */
export * as Tool from "./Tool.ts"
/** @since 0.1.0 */
export * as ToolError from "./ToolError.ts"
/** @since 0.1.0 */
export * as Trust from "./Trust.ts"
