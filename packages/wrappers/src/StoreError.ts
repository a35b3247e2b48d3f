/**
 * The one error a store reports when its backend fails: the database is
 * unreachable, a statement failed, the store was already closed. It names
 * the store and the operation, and keeps the backend's cause for logs; its
 * message says what to do next.
 *
 * @since 0.1.0
 */
import type { ToolError } from "@ugent/core"
import { Schema } from "effect"

/**
 * Which store failed.
 *
 * @category models
 * @since 0.1.0
 */
export const StoreName = Schema.Literals(["trace", "audit", "memory", "approvals"])

/**
 * @category models
 * @since 0.1.0
 */
export type StoreName = typeof StoreName.Type

/**
 * A store's backend failed.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { StoreError } from "@ugent/wrappers"
 * const e = new StoreError.StoreError({ store: "trace", operation: "append", detail: "database is locked" })
 * console.log(e.message)
 * // => The trace store could not append: database is locked. Check that the database is reachable and writable, then try again.
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  store: StoreName,
  operation: Schema.String,
  detail: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `The ${this.store} store could not ${this.operation}: ${this.detail}. Check that the database is reachable and writable, then try again.`
  }
}
