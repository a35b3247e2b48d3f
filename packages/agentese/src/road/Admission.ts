/**
 * Admission decides whether a call may run, as plain functions of the route,
 * the caller and the input: the recipe's policy, the caller's level (checked
 * once before the input is decoded, so a caller learns nothing of a path it
 * may not use, and once more only where the level depends on the input),
 * plan mode, the forbidden rules no level unlocks, whether a person must
 * approve, and the loop detector's key. Nothing here waits or writes; the
 * road acts on the verdicts.
 *
 * @since 0.2.0
 */
import { type Observer, ToolError, Trust } from "@ugent/core"
import { Schema } from "effect"
import * as Loop from "../Loop.ts"
import * as Recipe from "../Recipe.ts"
import * as Modes from "../self/Modes.ts"
import type { Route } from "./Route.ts"

/**
 * The recipe does not let this caller use the path.
 *
 * @category errors
 * @since 0.1.0
 */
export class PolicyDenied extends Schema.TaggedError<PolicyDenied>()("PolicyDenied", {
  path: Schema.String,
  reason: Schema.String
}) {
  static readonly kind: ToolError.Kind = "denied"
  override get message(): string {
    return `${this.path} is not available to you: ${this.reason}. Use only the paths you are offered (list them).`
  }
}

/**
 * What a call needs once it is admitted: the level the recipe requires for
 * this input, and the approval a person must give, if any.
 *
 * @category models
 * @since 0.2.0
 */
export interface Admitted {
  readonly required: Trust.TrustLevel
  readonly approval: Trust.ApprovalRequest | undefined
  /** The level the call runs at: the caller's, or the tool's own when the input needs less than the tool. */
  readonly runAt: Trust.TrustLevel
}

const levelDenied = (route: Route, required: Trust.TrustLevel, observer: Observer.ObserverShape) =>
  new ToolError.TrustDenied({
    tool: route.path,
    required,
    actual: observer.trust,
    ...(required > route.entry.tool.trust ? { reason: "the recipe raises this path's level" } : {})
  })

/**
 * The verdict before the input is decoded: a refusal, or `undefined` to go
 * on. `mode` is the caller's mode when the route is one plan mode refuses.
 *
 * @category admission
 * @since 0.2.0
 */
export const beforeDecoding = (
  route: Route,
  observer: Observer.ObserverShape,
  mode: Modes.Mode | undefined
): PolicyDenied | ToolError.TrustDenied | Modes.PlanMode | undefined => {
  const decision = route.decision
  if (decision._tag === "Denied") return new PolicyDenied({ path: route.path, reason: decision.reason })
  if (observer.trust < decision.requiredTrust) return levelDenied(route, decision.requiredTrust, observer)
  if (route.refusedInPlanMode && mode === "plan") return new Modes.PlanMode({ path: route.path })
  return undefined
}

/**
 * The verdict on the decoded input: a refusal (the level this input needs,
 * a forbidden rule), or what the admitted call needs.
 *
 * @category admission
 * @since 0.2.0
 */
export const afterDecoding = (
  route: Route,
  observer: Observer.ObserverShape,
  recipe: Recipe.Recipe,
  forbidden: ReadonlyArray<Trust.ForbiddenRule>,
  decoded: unknown
): Admitted | PolicyDenied | ToolError.TrustDenied | ToolError.Forbidden => {
  const entry = route.entry
  let decision = route.decision as Recipe.Decision & { readonly _tag: "Allowed" }
  if (entry.level !== undefined) {
    const decided = Recipe.decide(recipe, route.path, entry.level.of(decoded))
    if (decided._tag === "Denied") return new PolicyDenied({ path: route.path, reason: decided.reason })
    if (observer.trust < decided.requiredTrust) return levelDenied(route, decided.requiredTrust, observer)
    decision = decided
  }
  const refused = Trust.forbiddenBy(forbidden, route.path, decoded)
  if (refused !== undefined) return refused
  const required = decision.requiredTrust
  const irreversible = entry.tool.effects.irreversible
  const confirmation = required >= 2 && observer.trust === 2
  const approval: Trust.ApprovalRequest | undefined =
    confirmation || irreversible || decision.approval
      ? {
          tool: route.path,
          observer,
          input: decoded,
          reason: irreversible ? "irreversible" : "confirmation",
          detail: decision.approval
            ? "the recipe asks for approval of every call of this path"
            : irreversible
              ? `${route.path} cannot be undone.`
              : `${route.path} needs L${required}; the caller runs at L2, where each such call is confirmed.`
        }
      : undefined
  return { required, approval, runAt: observer.trust < entry.tool.trust ? entry.tool.trust : observer.trust }
}

/**
 * Whether a verdict of {@link afterDecoding} admits the call.
 *
 * @category admission
 * @since 0.2.0
 */
export const isAdmitted = (verdict: ReturnType<typeof afterDecoding>): verdict is Admitted => !("_tag" in verdict)

/**
 * The loop detector's key of a call, or `undefined` when the settings detect
 * no loops.
 *
 * @category admission
 * @since 0.2.0
 */
export const loopKey = (route: Route, observer: Observer.ObserverShape, decoded: unknown, root: string | undefined) =>
  route.loop === undefined ? undefined : Loop.keyOf(observer.id, route.path, decoded, root, route.entry.tool.input)
