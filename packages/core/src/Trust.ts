/**
 * Trust levels live in the type system. Each level is a capability service
 * (`Trust.L0` … `Trust.L3`); a tool of level `k` has `Trust.Lk` in its `R`,
 * so running it without that capability does not compile. Two things
 * discharge the requirement: {@link gate}, which checks the current
 * `Observer` at run time (with the L2 confirmation path through an
 * {@link Approver} and a forbidden list no level unlocks), and {@link grant},
 * a layer for tests, admin code and statically known callers.
 *
 * L0 read-only · L1 bounded writes (allowed paths only) · L2 suggestion
 * (writes anywhere, each confirmed) · L3 autonomous (everything, logged).
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Layer, Option, Predicate } from "effect"
import * as level from "./internal/level.ts"
import { L0, L1, L2, L3 } from "./internal/level.ts"
import { Observer, type ObserverShape } from "./Observer.ts"
import * as Secrets from "./Secrets.ts"
import type { Any, Tool } from "./Tool.ts"
import * as Tool_ from "./Tool.ts"
import { ApprovalDenied, Forbidden, TrustDenied } from "./ToolError.ts"

/**
 * A trust level: `0 | 1 | 2 | 3`.
 *
 * @category models
 * @since 0.1.0
 */
export type TrustLevel = level.TrustLevel

/**
 * The capabilities, one per level: a tool of level `k` needs `Trust.Lk` in
 * its `R`. They are re-exported (not aliased) so that declaration files can
 * name them through this module.
 *
 * @category capabilities
 * @since 0.1.0
 */
export { L0, L1, L2, L3 }

/**
 * Any trust capability.
 *
 * @category capabilities
 * @since 0.1.0
 */
export type Capability = level.Capability

/**
 * A capability above read-only.
 *
 * @category capabilities
 * @since 0.1.0
 */
export type WriteCapability = level.WriteCapability

/**
 * The capability service of a level.
 *
 * @category capabilities
 * @since 0.1.0
 */
export type CapabilityOf<L extends TrustLevel> = level.CapabilityOf<L>

/**
 * What each level means, for messages and listings.
 *
 * @category constants
 * @since 0.1.0
 */
export const meaning: Readonly<Record<TrustLevel, string>> = level.levelMeaning

/**
 * Whether a value is a trust level.
 *
 * @category guards
 * @since 0.1.0
 */
export const isTrustLevel = level.isTrustLevel

/**
 * Parses `"L2"`, `"2"` or `2` into a level.
 *
 * @category constructors
 * @since 0.1.0
 */
export const parse = (u: unknown): Option.Option<TrustLevel> => {
  const n = typeof u === "string" ? Number(u.replace(/^L/i, "")) : u
  return level.isTrustLevel(n) ? Option.some(n) : Option.none()
}

/**
 * A layer providing the capabilities of levels `0..level`. For tests, admin
 * code and statically known callers: it checks nothing at run time.
 *
 * **Example** (Running a tool with a static grant)
 * ```ts
 * import { Tool, Trust } from "@ugent/core"
 * import { Effect, Schema } from "effect"
 * const note = Tool.make({ name: "note.add", description: "Adds a note.", trust: 1, effects: { writesFs: true }, input: Schema.String, output: Schema.String, run: (s) => Effect.succeed(`noted: ${s}`) })
 * console.log(Effect.runSync(note.run("hi").pipe(Effect.provide(Trust.grant(1)))))
 * // => noted: hi
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const grant: {
  (level: 0): Layer.Layer<L0>
  (level: 1): Layer.Layer<L0 | L1>
  (level: 2): Layer.Layer<L0 | L1 | L2>
  (level: 3): Layer.Layer<Capability>
  (level: TrustLevel): Layer.Layer<L0>
} = (lvl: TrustLevel) => Layer.succeedContext(level.contextUpTo(lvl)) as Layer.Layer<Capability>

// ---------------------------------------------------------------------------
// Approval
// ---------------------------------------------------------------------------

/**
 * What an approver is asked to confirm.
 *
 * @category models
 * @since 0.1.0
 */
export interface ApprovalRequest {
  readonly tool: string
  readonly observer: ObserverShape
  readonly input: unknown
  /** `confirmation`: an L2 caller runs a write; `irreversible`: the tool says so; `escalation`: the input needs more than the tool's level. */
  readonly reason: "confirmation" | "irreversible" | "escalation"
  readonly detail: string
  /** What the call would change, as a unified diff, when the host could get it cheaply (a dry run); for the person who approves. */
  readonly preview?: string | undefined
  /** The id the host stored the request under, when it keeps requests: it can be answered elsewhere, and later. */
  readonly id?: string | undefined
}

/**
 * Confirms or refuses calls. The default has no human behind it and refuses
 * everything (`ApprovalDenied` with reason `no-approver`).
 *
 * @category services
 * @since 0.1.0
 */
export interface ApproverShape {
  readonly approve: (request: ApprovalRequest) => Effect.Effect<boolean | "no-approver">
}

/**
 * The approver service; a reference whose default refuses every request.
 *
 * **Example** (An approver that allows one tool)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { Effect, Layer } from "effect"
 * const onlyNotes = Trust.approverLayer((req) => Effect.succeed(req.tool === "note.add"))
 * console.log(Layer.isLayer(onlyNotes))
 * // => true
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export const Approver = Context.Reference<ApproverShape>("ugent/Trust/Approver", {
  defaultValue: () => ({ approve: () => Effect.succeed("no-approver" as const) })
})

/**
 * How long an approval may take before it counts as a denial (30 s by default).
 *
 * @category services
 * @since 0.1.0
 */
export const ApprovalTimeout = Context.Reference<Duration.Duration>("ugent/Trust/ApprovalTimeout", {
  defaultValue: () => Duration.seconds(30)
})

/**
 * A layer installing an approver.
 *
 * @category layers
 * @since 0.1.0
 */
export const approverLayer = (approve: (request: ApprovalRequest) => Effect.Effect<boolean>): Layer.Layer<never> =>
  Layer.succeed(Approver, { approve })

/**
 * Asks the current approver, with the current timeout; a timeout is a denial.
 *
 * @category approval
 * @since 0.1.0
 */
export const requestApproval = (request: ApprovalRequest): Effect.Effect<void, ApprovalDenied> =>
  Effect.gen(function* () {
    const approver = yield* Approver
    const timeout = yield* ApprovalTimeout
    const answer = yield* Effect.timeoutOption(approver.approve(request), timeout)
    if (Option.isNone(answer)) {
      return yield* new ApprovalDenied({
        tool: request.tool,
        reason: "timeout",
        timeoutMillis: Duration.toMillis(timeout)
      })
    }
    if (answer.value === "no-approver") return yield* new ApprovalDenied({ tool: request.tool, reason: "no-approver" })
    if (answer.value !== true) return yield* new ApprovalDenied({ tool: request.tool, reason: "denied" })
  })

// ---------------------------------------------------------------------------
// Forbidden rules
// ---------------------------------------------------------------------------

/**
 * A rule that no trust level unlocks. `check` sees the tool name and its
 * decoded input, and returns a detail when the call is forbidden.
 *
 * @category models
 * @since 0.1.0
 */
export interface ForbiddenRule {
  readonly name: string
  readonly check: (call: { readonly tool: string; readonly input: unknown }) => string | undefined
}

const pathKeys = new Set(["path", "paths", "file", "files", "target", "source", "destination", "cwd", "root", "dir"])
const commandKeys = new Set(["command", "cmd", "script", "commands"])

/** Collects the strings of an input under keys that name paths or commands. */
const stringsUnder = (input: unknown, keys: ReadonlySet<string>): ReadonlyArray<string> => {
  const out: Array<string> = []
  const visit = (value: unknown, key: string | undefined, depth: number) => {
    if (depth > 8) return
    if (typeof value === "string") {
      if (key !== undefined && keys.has(key)) out.push(value)
    } else if (Array.isArray(value)) {
      for (const v of value) visit(v, key, depth + 1)
    } else if (Predicate.isObject(value) && Object.getPrototypeOf(value) === Object.prototype) {
      for (const [k, v] of Object.entries(value)) visit(v, k, depth + 1)
    }
  }
  visit(input, undefined, 0)
  return out
}

const segmentsOf = (p: string) =>
  p
    .replace(/\\/g, "/")
    .split("/")
    .filter((s) => s !== "" && s !== ".")

/**
 * The rules shipped by default: `.git/` internals, secret files (the names
 * of `Secrets`), destructive shell patterns.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultForbiddenRules: ReadonlyArray<ForbiddenRule> = [
  {
    name: "git-internals",
    check: ({ input }) => {
      for (const p of stringsUnder(input, pathKeys)) {
        const segs = segmentsOf(p)
        const i = segs.indexOf(".git")
        if (i >= 0 && i < segs.length - 1) return `"${p}" is inside .git/, which only git itself may touch`
        if (i >= 0 && i === segs.length - 1 && segs.length > 0) return `"${p}" is the .git directory`
      }
      return undefined
    }
  },
  {
    name: "secrets",
    check: ({ input }) => {
      for (const p of stringsUnder(input, pathKeys)) {
        const secret = Secrets.match(p)
        if (secret !== undefined) {
          return `"${p}" names a secret file: "${secret.name}" is ${secret.rule.what} (pattern "${secret.rule.pattern}")`
        }
      }
      return undefined
    }
  },
  {
    name: "destructive-shell",
    check: ({ input }) => {
      const patterns: ReadonlyArray<readonly [RegExp, string]> = [
        [
          /\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(-[a-zA-Z]+\s+)*(\/|~|\$HOME|\*)(\s|$)/,
          "recursive removal of / or ~"
        ],
        [/\bmkfs(\.\w+)?\b/, "formatting a file system"],
        [/\bdd\b[^|;&]*\bof=\/dev\//, "writing to a raw device"],
        [/:\(\)\s*\{\s*:\|:&\s*\};:/, "a fork bomb"],
        [/>\s*\/dev\/(sd|nvme|hd)/, "writing to a raw device"]
      ]
      for (const c of stringsUnder(input, commandKeys)) {
        for (const [re, what] of patterns) if (re.test(c)) return `the command contains ${what}`
      }
      return undefined
    }
  }
]

/**
 * The forbidden rules in force; a reference whose default is
 * {@link defaultForbiddenRules}. Configuration may add rules, never remove the
 * defaults (see {@link withForbiddenRules}).
 *
 * @category services
 * @since 0.1.0
 */
export const ForbiddenRules = Context.Reference<ReadonlyArray<ForbiddenRule>>("ugent/Trust/ForbiddenRules", {
  defaultValue: () => defaultForbiddenRules
})

/**
 * A layer adding rules to the defaults.
 *
 * @category layers
 * @since 0.1.0
 */
export const withForbiddenRules = (rules: ReadonlyArray<ForbiddenRule>): Layer.Layer<never> =>
  Layer.succeed(ForbiddenRules, [...defaultForbiddenRules, ...rules])

/**
 * Checks a call against the forbidden rules in force.
 *
 * @category gating
 * @since 0.1.0
 */
export const checkForbidden = (tool: string, input: unknown): Effect.Effect<void, Forbidden> =>
  Effect.flatMap(ForbiddenRules, (rules) => {
    const forbidden = forbiddenBy(rules, tool, input)
    return forbidden === undefined ? Effect.void : Effect.fail(forbidden)
  })

/**
 * The first of `rules` a call breaks, as its `Forbidden` error, or
 * `undefined`: the check of {@link checkForbidden} as a plain function, for a
 * road that reads the rules once.
 *
 * @category gating
 * @since 0.2.0
 */
export const forbiddenBy = (
  rules: ReadonlyArray<ForbiddenRule>,
  tool: string,
  input: unknown
): Forbidden | undefined => {
  for (const rule of rules) {
    const detail = rule.check({ tool, input })
    if (detail !== undefined) return new Forbidden({ tool, rule: rule.name, detail })
  }
  return undefined
}

// ---------------------------------------------------------------------------
// The gate
// ---------------------------------------------------------------------------

/**
 * The observer of the gated call in progress, so that a tool can escalate
 * (`file.write` outside the writable globs needs L2).
 *
 * @internal
 */
const GateSession = Context.Reference<Option.Option<ObserverShape>>("ugent/Trust/GateSession", {
  defaultValue: () => Option.none()
})

type HasWrite<R> = [Extract<R, WriteCapability>] extends [never] ? false : true

/**
 * The errors a gate adds: `Forbidden` always; `TrustDenied` and
 * `ApprovalDenied` when the tool needs more than read-only.
 *
 * @category type-level
 * @since 0.1.0
 */
export type GateErrors<R> = Forbidden | (HasWrite<R> extends true ? TrustDenied | ApprovalDenied : never)

/**
 * Whether a tool is read-only: no write capability in `R` and no trust error
 * in `E` (a gated writer keeps `TrustDenied`).
 *
 * @category type-level
 * @since 0.1.0
 */
export type IsReadOnly<T> =
  T extends Tool<infer _A, infer _B, infer E, infer R>
    ? [Extract<R, WriteCapability> | Extract<E, TrustDenied>] extends [never]
      ? true
      : false
    : false

/**
 * The type a read-only-only wrapper asks for: the tool itself when it is read
 * only, otherwise an error marker that no tool satisfies.
 *
 * **Example** (A wrapper that only accepts read-only tools)
 * ```ts
 * import { Tool, Trust } from "@ugent/core"
 * const readOnlyName = <T extends Tool.Any>(tool: T & Trust.ReadOnly<T>): string => Trust.assertReadOnly(tool).name
 * console.log(readOnlyName(Tool.fromFunction({ name: "len", f: (s: string) => s.length })))
 * // => len
 * ```
 *
 * @category type-level
 * @since 0.1.0
 */
export type ReadOnly<T> = IsReadOnly<T> extends true ? unknown : NotReadOnly

/**
 * @category type-level
 * @since 0.1.0
 */
export interface NotReadOnly {
  readonly "~ugent/error": "this wrapper accepts only read-only (L0) tools: a write or a shell call cannot be cached or shared"
}

/**
 * The runtime mirror of {@link ReadOnly}: returns the tool, or throws when it
 * declares a level above L0 or effects that change the world.
 *
 * @category gating
 * @since 0.1.0
 */
export const assertReadOnly = <T extends Any>(tool: T): T => {
  if (tool.trust > 0 || tool.effects.writesFs || tool.effects.callsShell || tool.effects.irreversible) {
    throw new Error(`${tool.name} is not read-only (trust L${tool.trust}); this wrapper accepts only L0 tools.`)
  }
  return tool
}

/**
 * What a call must pass before it runs: the tool, the caller, the level the
 * call needs (the tool's own, or higher when a policy raises it), whether
 * the tool is irreversible, and an approval a policy asks for.
 *
 * @category models
 * @since 0.2.0
 */
export interface Admission {
  readonly tool: string
  readonly observer: ObserverShape
  readonly required: TrustLevel
  /** The tool's own level; when `required` is higher, a denial says a policy raised it. */
  readonly toolTrust?: TrustLevel | undefined
  readonly irreversible?: boolean | undefined
  /** A policy's demand that this call be approved, with why. */
  readonly approval?: string | undefined
  /** The decoded input, for the forbidden rules and the approver. */
  readonly input: unknown
}

/**
 * Checks a call once, in this order: the forbidden rules (no level unlocks
 * them); the caller's level against the required one (`TrustDenied`); then
 * the confirmation path, decided on its own and never skipped by an early
 * "the level suffices": an L2 caller running something that needs L2 or
 * more, an irreversible tool, or a policy's approval demand must be approved
 * by the `Approver` within `ApprovalTimeout` (`ApprovalDenied`). {@link gate}
 * and every road that serves tools call this, so there is one gate.
 *
 * **Example** (An L2 caller is asked to confirm; an L1 caller is denied)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { Effect } from "effect"
 * const call = (trust: 1 | 2) =>
 *   Trust.admit({ tool: "file.write", observer: { id: "a", trust }, required: 2, input: { path: "x" } })
 * const tag = (e: Effect.Effect<void, { readonly _tag: string }>) => Effect.runSync(Effect.match(e, { onFailure: (x) => x._tag, onSuccess: () => "ok" }))
 * console.log(tag(call(1)), tag(call(2)), tag(call(2).pipe(Effect.provide(Trust.approverLayer(() => Effect.succeed(true))))))
 * // => TrustDenied ApprovalDenied ok
 * ```
 *
 * @category gating
 * @since 0.2.0
 */
export const admit = (admission: Admission): Effect.Effect<void, Forbidden | TrustDenied | ApprovalDenied> =>
  Effect.gen(function* () {
    const { observer, required, tool } = admission
    yield* checkForbidden(tool, admission.input)
    if (observer.trust < required) {
      return yield* new TrustDenied({
        tool,
        required,
        actual: observer.trust,
        ...(admission.toolTrust !== undefined && required > admission.toolTrust
          ? { reason: "a policy raises this tool's level" }
          : {})
      })
    }
    const confirmation = required >= 2 && observer.trust === 2
    if (confirmation || admission.irreversible === true || admission.approval !== undefined) {
      yield* requestApproval({
        tool,
        observer,
        input: admission.input,
        reason: admission.irreversible === true ? "irreversible" : "confirmation",
        detail:
          admission.approval ??
          (admission.irreversible === true
            ? `${tool} cannot be undone.`
            : `${tool} needs L${required}; the caller runs at L2, where each such call is confirmed.`)
      })
    }
  })

/**
 * Runs an effect as an admitted caller: with the capabilities of its level,
 * and with the caller known to {@link escalate} inside. Use it after
 * {@link admit}.
 *
 * @category gating
 * @since 0.2.0
 */
export const runAs =
  (observer: ObserverShape) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Capability>> =>
    Effect.provideContext(effect, runContext(observer)) as Effect.Effect<A, E, Exclude<R, Capability>>

/**
 * What {@link runAs} provides, as a context: the capabilities of the
 * caller's level and the caller known to {@link escalate}. A road that serves
 * one caller many times makes it once.
 *
 * @category gating
 * @since 0.2.0
 */
export const runContext = (observer: ObserverShape): Context.Context<Capability> =>
  Context.add(level.contextUpTo(observer.trust) as Context.Context<Capability>, GateSession, Option.some(observer))

/**
 * Discharges a tool's trust requirement at run time. Before each call it
 * checks, in this order: the forbidden rules (no level unlocks them); the
 * current `Observer`'s level against the tool's (`TrustDenied`); then the
 * confirmation path: an L2 caller running a tool above L1, or any caller
 * running an irreversible tool, must be approved by the `Approver` within
 * `ApprovalTimeout` (`ApprovalDenied`). The call then runs with the
 * capabilities of the observer's level.
 *
 * **Example** (A gated write under an L1 observer)
 * ```ts
 * import { Observer, Tool, Trust } from "@ugent/core"
 * import { Effect, Schema } from "effect"
 * const note = Tool.make({ name: "note.add", description: "Adds a note.", trust: 1, effects: { writesFs: true }, input: Schema.String, output: Schema.String, run: (s) => Effect.succeed(`noted: ${s}`) })
 * const gated = Trust.gate(note)
 * console.log(Effect.runSync(gated.run("hi").pipe(Effect.provide(Observer.layer({ id: "agent", trust: 1 })))))
 * // => noted: hi
 * const denied = Effect.runSync(Effect.flip(gated.run("hi")).pipe(Effect.provide(Observer.layer({ id: "guest", trust: 0 }))))
 * console.log(denied._tag)
 * // => TrustDenied
 * ```
 *
 * @category gating
 * @since 0.1.0
 */
export const gate = <A, B, E, R>(
  self: Tool<A, B, E, R>
): Tool<A, B, E | GateErrors<R>, Exclude<R, Capability> | Observer> =>
  Tool_.wrap(
    self,
    (run) => (a: A) =>
      Effect.flatMap(Observer, (observer: ObserverShape) =>
        Effect.andThen(
          admit({
            tool: self.name,
            observer,
            required: self.trust,
            irreversible: self.effects.irreversible,
            input: a
          }),
          runAs(observer)(run(a))
        )
      ) as Effect.Effect<B, E | GateErrors<R>, Exclude<R, Capability> | Observer>,
    { failure: Tool_.failureWith(self, Forbidden, TrustDenied, ApprovalDenied) }
  )

/**
 * Asks, from inside a running tool, for a level above the tool's own: for
 * inputs that need more (a write outside the writable globs needs L2). Under a
 * gate it checks the gated observer (and confirms at L2); without one it
 * checks that the capability was granted.
 *
 * @category gating
 * @since 0.1.0
 */
export const escalate = (
  tool: string,
  required: TrustLevel,
  reason: string,
  input?: unknown
): Effect.Effect<void, TrustDenied | ApprovalDenied> =>
  Effect.gen(function* () {
    const session = yield* GateSession
    if (Option.isSome(session)) {
      const observer = session.value
      if (observer.trust < required) {
        return yield* new TrustDenied({ tool, required, actual: observer.trust, reason })
      }
      if (required >= 2 && observer.trust === 2) {
        yield* requestApproval({ tool, observer, input, reason: "escalation", detail: reason })
      }
      return
    }
    const present = yield* Effect.forEach(
      level.capabilityKeys as ReadonlyArray<Context.Key<Capability, unknown>>,
      (key) => Effect.serviceOption(key)
    )
    const highest = present.reduce<TrustLevel>((m, o, i) => (Option.isSome(o) ? (i as TrustLevel) : m), 0)
    if (Option.isNone(present[required]!)) {
      return yield* new TrustDenied({ tool, required, actual: highest, reason })
    }
  })
