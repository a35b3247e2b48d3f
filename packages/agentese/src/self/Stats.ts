/**
 * `self.tools.stats`: a caller's own figures, as the audit store has them:
 * its calls, successes, failures and refusals over a window, per tool, its
 * failures grouped by error, its latest errors with their messages, and the
 * limits in force for it. Only the caller's own rows: another caller's are
 * never read.
 *
 * @since 0.2.0
 */
import { Observer, Tool, type ToolError } from "@ugent/core"
import { AuditStore } from "@ugent/wrappers"
import { Clock, Effect, Schema } from "effect"
import * as Invoke from "../Invoke.ts"
import * as Profile from "../Profile.ts"
import * as Recipe from "../Recipe.ts"

/**
 * The audit store could not be read.
 *
 * @category errors
 * @since 0.2.0
 */
export class StatsUnavailable extends Schema.TaggedError<StatsUnavailable>()("StatsUnavailable", {
  detail: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `Your statistics cannot be read now (${this.detail}). Try again later; your calls are not affected.`
  }
}

const ToolRow = Schema.Struct({
  path: Schema.String,
  calls: Schema.Int,
  successes: Schema.Int,
  failures: Schema.Int,
  refusals: Schema.Int
})

const RecentError = Schema.Struct({
  at: Schema.Number,
  path: Schema.String,
  error: Schema.String,
  message: Schema.String
})

/**
 * What `self.tools.stats` returns.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Output = Schema.Struct({
  observerId: Schema.String,
  /** The window's start, epoch milliseconds. */
  since: Schema.Number,
  calls: Schema.Int,
  successes: Schema.Int,
  failures: Schema.Int,
  refusals: Schema.Int,
  byTool: Schema.Array(ToolRow),
  /** Failures grouped by error, most frequent first. */
  failuresByError: Schema.Array(AuditStore.FailureCount),
  /** The latest failures, newest first. */
  recentErrors: Schema.Array(RecentError),
  /** The limits in force for the caller, in a line. */
  limits: Schema.optionalKey(Schema.String)
})

/**
 * @category models
 * @since 0.2.0
 */
export type Output = typeof Output.Type

/**
 * `self.tools.stats`: the caller's own figures and recent errors.
 *
 * @category tools
 * @since 0.2.0
 */
export const stats = Tool.make({
  name: "stats",
  description:
    "Your own figures on this server: calls, successes, failures and refusals per tool over the last minutes, failures grouped by error, your latest errors with their messages, and the rate limits in force for you. Use it when calls keep failing or being refused.",
  input: Schema.Struct({
    sinceMinutes: Schema.optionalKey(
      Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 43_200 })).annotate({
        description: "How far back, in minutes (default 1440: the last 24 hours)."
      })
    ),
    recent: Schema.optionalKey(
      Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 50 })).annotate({
        description: "How many of your latest errors to show (default 5)."
      })
    )
  }),
  output: Output,
  failure: StatsUnavailable,
  run: (input) =>
    Effect.gen(function* () {
      // The caller is in every call's context (the road puts it there); read as an option, as the family's type asks.
      const caller = yield* Effect.serviceOption(Observer.Observer)
      if (caller._tag === "None") return yield* new StatsUnavailable({ detail: "no caller in context" })
      const observer = caller.value
      const audit = yield* AuditStore.AuditStore
      const now = yield* Clock.currentTimeMillis
      const since = now - (input.sinceMinutes ?? 1440) * 60_000
      const unavailable = (e: { readonly message: string }) => new StatsUnavailable({ detail: e.message })
      const a = yield* Effect.mapError(audit.analytics({ since, observerId: observer.id }), unavailable)
      const wanted = input.recent ?? 5
      const latest =
        wanted === 0
          ? []
          : yield* Effect.mapError(audit.list({ since, observerId: observer.id, limit: 50 * wanted }), unavailable)
      const recentErrors = latest
        .filter((e) => e.phase === "after" && e.status === "failure" && e.error !== undefined)
        .slice(0, wanted)
        .map((e) => ({ at: e.at, path: e.path, error: e.error!.tag, message: e.error!.message }))
      // The limits in force: the road's settings for the caller's recipe, where the road is at hand.
      const road = yield* Effect.serviceOption(Invoke.Invoker)
      const recipe = yield* Effect.serviceOption(Recipe.CurrentRecipe)
      const limits =
        road._tag === "Some" && recipe._tag === "Some"
          ? Profile.describe(yield* Effect.provideService(road.value.settings, Recipe.CurrentRecipe, recipe.value))
          : undefined
      return {
        observerId: observer.id,
        since,
        ...a.totals,
        byTool: a.byObserverTool.map(({ observerId: _, ...row }) => row),
        failuresByError: a.failures,
        recentErrors,
        ...(limits === undefined ? {} : { limits })
      }
    })
})

/**
 * The result in a sentence, for the model reading it.
 *
 * @category presenting
 * @since 0.2.0
 */
export const summary = (o: Output): string => {
  const errors = o.failuresByError.map((f) => `${f.reason} ×${f.count}`).join(", ")
  return `${o.calls} calls since ${new Date(o.since).toISOString()}: ${o.successes} succeeded, ${o.failures} failed (${o.refusals} refused)${errors === "" ? "" : `: ${errors}`}`
}
