/**
 * An `Observation` is what a law sees of one side when it runs: its `Exit`
 * (success, typed failure, defect or interruption) and the {@link EffectLog}
 * of the effects it performed, in order, with their virtual times. Each side
 * runs on its own: a fresh `TestClock`, a fresh log, fresh user services and
 * the trust capabilities granted for the check.
 *
 * Equality of observations is a parameter of every law. The default compares
 * exits (successes and typed failures structurally, defects by message,
 * interruption as interruption) and logs (labels and times).
 *
 * @since 0.1.0
 */
import { Trust } from "@ugent/core"
import { Cause, Clock, Duration, Effect, Equal, Exit, Fiber, Layer, Option, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as EffectLog from "./EffectLog.ts"
import { defectMessage, show } from "./internal/show.ts"

/**
 * What one side did.
 *
 * @category models
 * @since 0.1.0
 */
export interface Observation<out A = unknown, out E = unknown> {
  readonly exit: Exit.Exit<A, E>
  readonly log: ReadonlyArray<EffectLog.Entry>
  /** `false` when the side was still running after the time horizon and the live timeout. */
  readonly completed: boolean
}

/**
 * An equality of observations: the parameter every law is checked with.
 *
 * @category models
 * @since 0.1.0
 */
export type Equivalence = (self: Observation, that: Observation) => boolean

/**
 * How logs are compared: `"timed"` (labels and virtual times, the default),
 * `"ordered"` (labels in order), `"ignored"`.
 *
 * @category models
 * @since 0.1.0
 */
export type LogMode = "timed" | "ordered" | "ignored"

/**
 * The default equality of values: Effect's structural `Equal.equals`, which
 * compares plain objects, arrays and class instances (tagged errors
 * included) field by field.
 *
 * **Example** (Structural equality)
 * ```ts
 * import { Observation } from "@ugent/laws"
 * import { Schema } from "effect"
 * class Miss extends Schema.TaggedError<Miss>()("Miss", { key: Schema.String }) {}
 * console.log(Observation.valueEquivalence(new Miss({ key: "a" }), new Miss({ key: "a" })), Observation.valueEquivalence({ n: 1 }, { n: 2 }))
 * // => true false
 * ```
 *
 * @category equivalence
 * @since 0.1.0
 */
export const valueEquivalence = (self: unknown, that: unknown): boolean => Equal.equals(self, that)

const reasonsEqual = (
  self: Cause.Cause<unknown>,
  that: Cause.Cause<unknown>,
  failures: (a: unknown, b: unknown) => boolean
): boolean => {
  const a = self.reasons
  const b = that.reasons
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    if (Cause.isFailReason(x)) {
      if (!Cause.isFailReason(y) || !failures(x.error, y.error)) return false
    } else if (Cause.isDieReason(x)) {
      if (!Cause.isDieReason(y) || defectMessage(x.defect) !== defectMessage(y.defect)) return false
    } else if (!Cause.isInterruptReason(y)) {
      return false
    }
  }
  return true
}

/**
 * An equality of exits from an equality of outputs (and optionally of typed
 * failures): defects are compared by message, interruptions are equal
 * whatever fiber interrupted.
 *
 * **Example** (Defects by message, interruption as interruption)
 * ```ts
 * import { Observation } from "@ugent/laws"
 * import { Exit } from "effect"
 * const eq = Observation.exitEquivalence()
 * console.log(eq(Exit.die(new Error("bug")), Exit.die(new Error("bug"))), eq(Exit.interrupt(1), Exit.interrupt(2)), eq(Exit.succeed(1), Exit.fail(1)))
 * // => true true false
 * ```
 *
 * @category equivalence
 * @since 0.1.0
 */
export const exitEquivalence =
  (
    outputs: (self: unknown, that: unknown) => boolean = valueEquivalence,
    failures: (self: unknown, that: unknown) => boolean = valueEquivalence
  ) =>
  (self: Exit.Exit<unknown, unknown>, that: Exit.Exit<unknown, unknown>): boolean => {
    if (Exit.isSuccess(self)) return Exit.isSuccess(that) && outputs(self.value, that.value)
    return Exit.isFailure(that) && reasonsEqual(self.cause, that.cause, failures)
  }

const logsEqual = (mode: LogMode, self: ReadonlyArray<EffectLog.Entry>, that: ReadonlyArray<EffectLog.Entry>) => {
  if (mode === "ignored") return true
  if (self.length !== that.length) return false
  return self.every((e, i) => e.label === that[i]!.label && (mode === "ordered" || e.at === that[i]!.at))
}

/**
 * An equality of observations from an equality of exits and a log mode.
 *
 * **Example** (Comparing outputs by length only)
 * ```ts
 * import { Observation } from "@ugent/laws"
 * import { Exit } from "effect"
 * const byLength = Observation.byExit(Observation.exitEquivalence((a, b) => String(a).length === String(b).length))
 * console.log(byLength({ exit: Exit.succeed("ab"), log: [], completed: true }, { exit: Exit.succeed("xy"), log: [], completed: true }))
 * // => true
 * ```
 *
 * @category equivalence
 * @since 0.1.0
 */
export const byExit =
  (
    exits: (self: Exit.Exit<unknown, unknown>, that: Exit.Exit<unknown, unknown>) => boolean,
    options?: { readonly log?: LogMode | undefined }
  ): Equivalence =>
  (self, that) =>
    self.completed &&
    that.completed &&
    exits(self.exit, that.exit) &&
    logsEqual(options?.log ?? "timed", self.log, that.log)

/**
 * An equality of observations that compares successful outputs with `outputs`
 * and everything else as the default does.
 *
 * **Example** (Ignoring a timestamp field of the output)
 * ```ts
 * import { Observation } from "@ugent/laws"
 * import { Exit } from "effect"
 * const eq = Observation.byOutput((a, b) => (a as { id: number }).id === (b as { id: number }).id)
 * console.log(eq({ exit: Exit.succeed({ id: 1, at: 5 }), log: [], completed: true }, { exit: Exit.succeed({ id: 1, at: 9 }), log: [], completed: true }))
 * // => true
 * ```
 *
 * @category equivalence
 * @since 0.1.0
 */
export const byOutput = (
  outputs: (self: unknown, that: unknown) => boolean,
  options?: { readonly log?: LogMode | undefined }
): Equivalence => byExit(exitEquivalence(outputs), options)

/**
 * The default equality: exits compared structurally (defects by message,
 * interruption as interruption) and logs compared with their times.
 *
 * **Example** (Two successes with the same value)
 * ```ts
 * import { Observation } from "@ugent/laws"
 * import { Exit } from "effect"
 * const a = { exit: Exit.succeed({ n: 1 }), log: [{ label: "x", at: 0 }], completed: true }
 * const b = { exit: Exit.succeed({ n: 1 }), log: [{ label: "x", at: 10 }], completed: true }
 * console.log(Observation.equivalence(a, a), Observation.equivalence(a, b))
 * // => true false
 * ```
 *
 * @category equivalence
 * @since 0.1.0
 */
export const equivalence: Equivalence = byExit(exitEquivalence())

/**
 * Which parts of two observations differ, by the default comparison: a list
 * of `"completion"`, `"exit"`, `"log"` (empty when they agree).
 *
 * **Example** (What differs)
 * ```ts
 * import { Observation } from "@ugent/laws"
 * import { Exit } from "effect"
 * const a = { exit: Exit.succeed(1), log: [{ label: "x", at: 0 }], completed: true }
 * const b = { exit: Exit.succeed(2), log: [], completed: true }
 * console.log(Observation.differences(a, b))
 * // => [ 'exit', 'log' ]
 * ```
 *
 * @category equivalence
 * @since 0.1.0
 */
export const differences = (self: Observation, that: Observation): ReadonlyArray<"completion" | "exit" | "log"> => {
  const out: Array<"completion" | "exit" | "log"> = []
  if (self.completed !== that.completed) out.push("completion")
  if (!exitEquivalence()(self.exit, that.exit)) out.push("exit")
  if (!logsEqual("timed", self.log, that.log)) out.push("log")
  return out
}

/**
 * A one-line rendering of an observation for a report.
 *
 * **Example** (Rendering)
 * ```ts
 * import { Observation } from "@ugent/laws"
 * import { Exit } from "effect"
 * console.log(Observation.format({ exit: Exit.succeed(2), log: [{ label: "a", at: 10 }], completed: true }))
 * // => Success(2); log [a@10ms]
 * ```
 *
 * @category formatting
 * @since 0.1.0
 */
export const format = (self: Observation): string =>
  `${self.completed ? "" : "DID NOT COMPLETE: "}${show(self.exit)}; log [${self.log.map((e) => `${e.label}@${e.at}ms`).join(", ")}]`

/**
 * How a side is run.
 *
 * @category models
 * @since 0.1.0
 */
export interface RunOptions {
  /** Services the tools under test need, built fresh for each side. */
  readonly provide?: Layer.Layer<never, unknown, never> | undefined
  /** The trust capabilities granted to each side (`Trust.grant(level)`); 3 by default. */
  readonly trust?: Trust.TrustLevel | undefined
  /** How far virtual time may move while a side runs: every sleep up to it runs, in order. One year by default. */
  readonly horizon?: Duration.Input | undefined
  /** How long (real time) a side may wait on something other than a sleep (I/O). 10 seconds by default. */
  readonly timeout?: Duration.Input | undefined
}

/**
 * A side needed something the runner was not given: a service missing from
 * `provide`, or a layer that failed to build. This is a mistake in the set-up,
 * not a falsified law, so it is reported apart.
 *
 * **Example** (A missing service)
 * ```ts
 * import { Observation } from "@ugent/laws"
 * import { Context, Effect, Exit } from "effect"
 * class Db extends Context.Service<Db, { readonly url: string }>()("app/Db") {}
 * const exit = await Effect.runPromise(Effect.exit(Observation.run(Db.use((db) => Effect.succeed(db.url)))))
 * console.log(Exit.isFailure(exit) && exit.cause.reasons.some((r) => r._tag === "Die" && r.defect instanceof Observation.SetupError))
 * // => true
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class SetupError extends Error {
  override readonly name = "SetupError"
}

/**
 * The services a side may need that the runner provides itself.
 *
 * @category models
 * @since 0.1.0
 */
export type Provided = EffectLog.EffectLog | Trust.Capability | Scope.Scope

const missingService = (cause: Cause.Cause<unknown>): string | undefined => {
  for (const r of cause.reasons) {
    if (Cause.isDieReason(r) && r.defect instanceof Error && r.defect.message.startsWith("Service not found")) {
      return r.defect.message
    }
  }
  return undefined
}

/**
 * A clock that is the test clock, but knows which sleeps are in progress, so
 * the runner moves time only when something sleeps, and only to the next
 * wake-up: effects keep exact virtual times even when a side waits on real
 * I/O between its sleeps.
 */
const trackingClock = (testClock: TestClock.TestClock) => {
  const pending: Array<number> = []
  let registrations = 0
  const clock: Clock.Clock = {
    ...testClock,
    sleep: (duration) =>
      Effect.suspend(() => {
        const end = testClock.currentTimeMillisUnsafe() + Duration.toMillis(duration)
        pending.push(end)
        registrations++
        return Effect.ensuring(
          testClock.sleep(duration),
          Effect.sync(() => {
            const i = pending.indexOf(end)
            if (i >= 0) pending.splice(i, 1)
          })
        )
      })
  }
  return { clock, pending, registrations: () => registrations }
}

/**
 * Runs one side on its own: a fresh `TestClock`, a fresh {@link EffectLog},
 * the granted trust and the user's services. Time moves only while the side
 * sleeps: to the next wake-up, in order, up to the horizon. A missing service
 * is a {@link SetupError} defect.
 *
 * **Example** (Observing a side that sleeps and logs)
 * ```ts
 * import { EffectLog, Observation } from "@ugent/laws"
 * import { Effect } from "effect"
 * const side = Effect.sleep("20 millis").pipe(Effect.andThen(EffectLog.append("done")), Effect.as(42))
 * const seen = await Effect.runPromise(Observation.run(side))
 * console.log(Observation.format(seen))
 * // => Success(42); log [done@20ms]
 * ```
 *
 * @category running
 * @since 0.1.0
 */
export const run = <A, E>(
  side: Effect.Effect<A, E, Provided | unknown>,
  options?: RunOptions
): Effect.Effect<Observation<A, E>> =>
  Effect.scoped(
    Effect.gen(function* () {
      const scope = yield* Scope.Scope
      const log = EffectLog.make()
      const user =
        options?.provide === undefined
          ? Effect.succeed(undefined)
          : Layer.buildWithScope(Layer.fresh(options.provide), scope)
      const services = yield* Effect.catchCause(user, (cause) =>
        Effect.die(new SetupError(`The layer given in \`provide\` failed to build: ${Cause.pretty(cause)}`))
      )
      const trust = yield* Layer.buildWithScope(Trust.grant(options?.trust ?? 3), scope)
      const testClock = yield* TestClock.testClockWith(Effect.succeed)
      const tracking = trackingClock(testClock)
      // The side's requirements are the runner's services and the user's layer; anything else is caught below as a SetupError.
      const provided = side.pipe(
        Effect.provideService(EffectLog.EffectLog, log),
        Effect.provideContext(trust),
        (eff) => (services === undefined ? eff : Effect.provideContext(eff, services)),
        Effect.scoped,
        Effect.provideService(Clock.Clock, tracking.clock)
      ) as Effect.Effect<A, E>
      const fiber = yield* Effect.forkChild(provided)
      const horizon = Duration.toMillis(Duration.fromInputUnsafe(options?.horizon ?? Duration.days(365)))
      const timeout = Duration.toMillis(Duration.fromInputUnsafe(options?.timeout ?? Duration.seconds(10)))
      const startedAt = testClock.currentTimeMillisUnsafe()
      let waited = 0
      let exit: Exit.Exit<A, E> | undefined
      while (exit === undefined) {
        // Let every fiber of the side run until it blocks, so that sleeps started together are all registered.
        let before = -1
        for (let round = 0; round < 16 && before !== tracking.registrations(); round++) {
          before = tracking.registrations()
          yield* Effect.yieldNow
          yield* Effect.yieldNow
        }
        exit = fiber.pollUnsafe()
        if (exit !== undefined) break
        if (tracking.pending.length > 0) {
          const next = Math.min(...tracking.pending)
          if (next - startedAt > horizon) break
          yield* testClock.adjust(Math.max(0, next - testClock.currentTimeMillisUnsafe()))
          continue
        }
        // Nothing sleeps and the side is not done: it waits on something real (I/O); give it real time.
        if (waited >= timeout) break
        const done = yield* TestClock.withLive(Effect.timeoutOption(Fiber.await(fiber), Duration.millis(2)))
        waited += 2
        if (Option.isSome(done)) exit = done.value
      }
      const completed = exit !== undefined
      const final: Exit.Exit<A, E> = exit ?? (yield* Fiber.interrupt(fiber).pipe(Effect.andThen(Fiber.await(fiber))))
      if (Exit.isFailure(final)) {
        const missing = missingService(final.cause)
        if (missing !== undefined) {
          const level = /ugent\/Trust\/L(\d)/.exec(missing)?.[1]
          return yield* Effect.die(
            new SetupError(
              level !== undefined
                ? `${missing}. A tool under test needs trust L${level}, above the L${options?.trust ?? 3} the check grants: raise \`trust\`.`
                : `${missing}. The tools under test need a service the check was not given: pass it with \`provide\`.`
            )
          )
        }
      }
      return { exit: final, log: yield* log.entries, completed }
    }).pipe(Effect.provide(Layer.fresh(TestClock.layer())))
  )
