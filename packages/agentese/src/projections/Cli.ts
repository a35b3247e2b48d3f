/**
 * The `ugent` command line: the `invoke` road from a shell. `ugent list`,
 * `ugent describe <path>` and `ugent invoke <path | "a >> b">` call the road
 * once; `ugent exec` runs every call in a model's text; `ugent agent` runs a
 * task with the configured model, step by step; `ugent serve` starts
 * the HTTP API (and the MCP endpoint at `/mcp`); `ugent mcp` is an MCP server
 * on stdio; `ugent report` is a status report of the workspace (see the
 * `Report` module).
 *
 * The caller is configured by flags (`--root`, `--trust`, `--recipe`), never
 * by the input. With `--json` a command prints exactly one JSON object on
 * stdout. Exit codes: 0 success, 1 a call that did not succeed (any
 * `ok: false`), 2 a usage error (bad flags, invalid `--input` JSON, an
 * unreadable or invalid recipe, an unknown trust level).
 *
 * @since 0.1.0
 */
import { statSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { text as readAll } from "node:stream/consumers"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { ToolError, Trust } from "@ugent/core"
import { Sandbox } from "@ugent/tools"
import { ApprovalStore, AuditStore, TraceStore } from "@ugent/wrappers"
import {
  Cause,
  Console,
  Context,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Logger,
  Option,
  Predicate,
  Runtime,
  Schema
} from "effect"
import { Argument, CliError, CliOutput, Command, Flag } from "effect/cli"
import { type AiError, LanguageModel } from "effect/ai"
import * as Agent from "../Agent.ts"
import * as AgentRuns from "../AgentRuns.ts"
import * as Callers from "../Callers.ts"
import * as Catalog from "../Catalog.ts"
import * as Families from "../Families.ts"
import * as Human from "../Human.ts"
import type * as Invoke from "../Invoke.ts"
import { Invoker } from "../Invoke.ts"
import * as Profile from "../Profile.ts"
import * as Mounts from "../Mounts.ts"
import * as Model from "../providers/Model.ts"
import * as Recipe from "../Recipe.ts"
import * as Approval from "../road/Approval.ts"
import * as Registry from "../Registry.ts"
import * as Report from "../Report.ts"
import * as Server from "../Server.ts"
import * as SessionState from "../SessionState.ts"
import * as State from "../State.ts"
import * as Telemetry from "../Telemetry.ts"

/**
 * The version `ugent --version` prints.
 *
 * @category constants
 * @since 0.1.0
 */
export const version = "0.1.0"

// ---------------------------------------------------------------------------
// Errors and exit codes
// ---------------------------------------------------------------------------

/**
 * The command line was wrong: a flag, the `--input` JSON, the recipe, the
 * root. Exit code 2.
 *
 * @category errors
 * @since 0.1.0
 */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  problem: Schema.String
}) {
  override readonly [Runtime.errorExitCode] = 2
  override readonly [Runtime.errorReported] = true
  override get message(): string {
    const problem = /[.!?]$/.test(this.problem.trimEnd()) ? this.problem.trimEnd() : `${this.problem.trimEnd()}.`
    return `${problem} Run ugent --help (or ugent <command> --help) for usage.`
  }
}

/**
 * A call did not succeed; its outcome is already printed. Exit code 1.
 *
 * @category errors
 * @since 0.1.0
 */
export class CallFailed extends Schema.TaggedError<CallFailed>()("CallFailed", {
  path: Schema.String,
  tag: Schema.String
}) {
  override readonly [Runtime.errorExitCode] = 1
  override readonly [Runtime.errorReported] = true
  override get message(): string {
    return `The call to ${this.path} failed with ${this.tag}.`
  }
}

/**
 * The model `ugent agent` would use is misconfigured or cannot be reached;
 * found before the first step and printed as one line. Exit code 2.
 *
 * @category errors
 * @since 0.2.0
 */
export class ModelNotReady extends Schema.TaggedError<ModelNotReady>()("ModelNotReady", {
  problem: Schema.String
}) {
  override readonly [Runtime.errorExitCode] = 2
  override readonly [Runtime.errorReported] = true
  override get message(): string {
    return this.problem
  }
}

// ---------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------

const common = {
  root: Flag.Directory("root").pipe(
    Flag.withDescription("The workspace root (default: the current directory)"),
    Flag.optional
  ),
  trust: Flag.String("trust").pipe(
    Flag.withDescription(
      "The caller's trust level, L0..L3 (or 0..3): L0 read-only, L1 writes with a read proof inside the writable globs, L2 more, each write confirmed on the terminal, L3 everything"
    ),
    Flag.withDefault("L0")
  ),
  recipe: Flag.String("recipe").pipe(
    Flag.withDescription("A recipe file (JSON): allow / deny patterns, approvals, rate limits, minimum trust"),
    Flag.optional
  ),
  family: Flag.String("family").pipe(
    Flag.withDescription(
      "A module whose default export is a tool family (Family.make of @ugent/core), served after the built-in ones: a file (./family.ts, from the current directory) or a package; repeatable"
    ),
    Flag.atLeast(0)
  ),
  mount: Flag.String("mount").pipe(
    Flag.withDescription(
      "An MCP server whose tools are served at world.mcp.<name>.<tool>, through the same road: <name>=<command and arguments> (started over stdio, without a shell) or <name>=<https URL> (streamable HTTP); repeatable"
    ),
    Flag.atLeast(0)
  ),
  stores: Flag.String("stores").pipe(
    Flag.withDescription(
      "Where traces and audit records go: memory, sqlite (<root>/.ugent/ugent.db, git-ignored) or a postgres:// URL"
    ),
    Flag.optional
  ),
  tracePayloads: Flag.Literals("trace-payloads", ["head", "full"]).pipe(
    Flag.withDescription(
      "What a trace keeps of each input and output: head (default: the first 1.5 KB of its JSON, its size and SHA-256) or full"
    ),
    Flag.withDefault("head" as const)
  ),
  traceRetention: Flag.String("trace-retention").pipe(
    Flag.withDescription(
      "How long traces are kept, by age and total size, oldest removed first: e.g. 7d,200MB (default), 30d, 1GB, or off"
    ),
    Flag.optional
  ),
  auditSync: Flag.Boolean("audit-sync").pipe(
    Flag.withDescription(
      "Commit each audit entry before the call is answered (default: written behind within ~50 ms, so a killed process loses its last entries)"
    ),
    Flag.withDefault(false)
  ),
  observer: Flag.String("observer").pipe(
    Flag.withDescription("The caller's id in traces, audit records and rate limits (default local)"),
    Flag.withDefault("local")
  ),
  redis: Flag.String("redis").pipe(
    Flag.withDescription("A Redis URL to share rate limits and circuit breakers with other processes"),
    Flag.optional
  ),
  onStoreError: Flag.Literals("on-store-error", ["allow", "fail"]).pipe(
    Flag.withDescription(
      "When Redis (--redis) does not answer: allow (default: calls run, uncounted) or fail (calls are refused as unavailable)"
    ),
    Flag.withDefault("allow" as const)
  ),
  profile: Flag.Literals("profile", ["local", "team", "shared"]).pipe(
    Flag.withDescription(
      "The defaults: local (one agent: no rate limits, loop protection on; default of invoke, exec, mcp), team (a few people's agents: limits that stop a runaway loop, 120 calls a minute per caller; default of serve) or shared (a room of untrusted agents: the design's limits, 5 reads a minute per caller)"
    ),
    Flag.optional
  ),
  rateGlobal: Flag.String("rate-global").pipe(
    Flag.withDescription("Rate limits over every caller, e.g. 100/min,2000/h (none: no limit)"),
    Flag.optional
  ),
  rateCaller: Flag.String("rate-caller").pipe(
    Flag.withDescription("Rate limits per caller, e.g. 10/min+3,200/h (+3: a burst allowance)"),
    Flag.optional
  ),
  rateTool: Flag.String("rate-tool").pipe(
    Flag.withDescription(
      "Rate limits per caller and path pattern, e.g. 'world.tools.file.read=5/min;world.tools.search.*=3/min'"
    ),
    Flag.optional
  ),
  timeout: Flag.String("timeout").pipe(
    Flag.withDescription("Each call's time limit, e.g. 30s, 2min (default 120s)"),
    Flag.optional
  ),
  loop: Flag.String("loop").pipe(
    Flag.withDescription(
      "The loop detector: refuse a call that gave the same result N times in a window with nothing written, e.g. 3/1min (default), or off"
    ),
    Flag.optional
  ),
  shellNetwork: Flag.Boolean("shell-network").pipe(
    Flag.withDescription(
      "Let shell commands (world.tools.system.bash) use the network; by default the sandbox has none"
    ),
    Flag.withDefault(false)
  ),
  unsandboxed: Flag.Boolean("dangerously-run-shell-unsandboxed").pipe(
    Flag.withDescription(
      "Serve world.tools.system.bash WITHOUT a sandbox where none can be made (bubblewrap missing). Only with --trust L3: commands then run with your user's rights"
    ),
    Flag.withDefault(false)
  ),
  sandboxUser: Flag.String("sandbox-user").pipe(
    Flag.withDescription(
      "When ugent runs as root: the host user shell commands run as, uid:gid (default: the workspace's owner; never root)"
    ),
    Flag.optional
  ),
  proofMaxAge: Flag.String("proof-max-age").pipe(
    Flag.withDescription(
      "How long a read proof is accepted after the read, e.g. 30min, 2h (default 24h; off: no bound); an older one is refused with a message to read again"
    ),
    Flag.optional
  ),
  budget: Flag.Int("budget").pipe(
    Flag.withDescription(
      "The largest result returned whole, in estimated tokens (default 25000); a larger one goes to working memory"
    ),
    Flag.optional
  )
}

const outputSchemas = Flag.Boolean("output-schemas").pipe(
  Flag.withDescription(
    "MCP: declare each tool's output JSON Schema (results carry structuredContent either way; clients that validate compile every schema on each listing)"
  ),
  Flag.withDefault(false)
)

const maxMessageBytes = Flag.Int("max-message-bytes").pipe(
  Flag.withDescription(
    "MCP on stdio: the largest message read, in bytes (default 4 MiB, at most 16 MiB); a longer one is answered with a JSON-RPC error, unread"
  ),
  Flag.optional
)

const json = Flag.Boolean("json").pipe(
  Flag.withDescription("Print exactly one JSON object on stdout"),
  Flag.withDefault(false)
)

type Common = {
  readonly root: Option.Option<string>
  readonly trust: string
  readonly recipe: Option.Option<string>
  readonly family: ReadonlyArray<string>
  readonly mount: ReadonlyArray<string>
  readonly stores: Option.Option<string>
  readonly tracePayloads: "head" | "full"
  readonly traceRetention: Option.Option<string>
  readonly auditSync: boolean
  readonly redis: Option.Option<string>
  readonly onStoreError: "allow" | "fail"
  readonly observer: string
  readonly profile: Option.Option<Profile.Profile>
  readonly rateGlobal: Option.Option<string>
  readonly rateCaller: Option.Option<string>
  readonly rateTool: Option.Option<string>
  readonly timeout: Option.Option<string>
  readonly loop: Option.Option<string>
  readonly budget: Option.Option<number>
  readonly proofMaxAge: Option.Option<string>
  readonly shellNetwork: boolean
  readonly unsandboxed: boolean
  readonly sandboxUser: Option.Option<string>
}

const storesOf = (
  flag: Option.Option<string>,
  fallback: "memory" | "sqlite"
): Effect.Effect<NonNullable<Server.Options["stores"]>, UsageError> => {
  if (Option.isNone(flag)) return Effect.succeed(fallback)
  const value = flag.value
  if (value === "memory" || value === "sqlite") return Effect.succeed(value)
  if (/^postgres(ql)?:\/\//.test(value)) return Effect.succeed({ pg: value })
  return Effect.fail(
    new UsageError({ problem: `--stores ${value} is not a store: use memory, sqlite or a postgres:// URL.` })
  )
}

/**
 * `--trace-retention`: `off`, or an age and/or a size, comma-separated
 * (`7d,200MB`, `12h`, `1GB`); a bound not given keeps its default.
 */
const retentionFlag = (
  flag: Option.Option<string>
): Effect.Effect<TraceStore.Retention | false | undefined, UsageError> => {
  if (Option.isNone(flag)) return Effect.succeed(undefined)
  const value = flag.value.trim()
  if (value === "off") return Effect.succeed(false)
  const retention: { maxAge?: Duration.Duration; maxBytes?: number } = {}
  for (const part of value.split(",").map((p) => p.trim())) {
    const age = /^(\d+(?:\.\d+)?)\s*(m|min|h|d)$/i.exec(part)
    const size = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB)$/i.exec(part)
    if (age !== null && retention.maxAge === undefined) {
      const unit = age[2]!.toLowerCase()
      retention.maxAge = Duration.millis(
        Number(age[1]) * (unit === "d" ? 86_400_000 : unit === "h" ? 3_600_000 : 60_000)
      )
    } else if (size !== null && retention.maxBytes === undefined) {
      const unit = size[2]!.toUpperCase()
      retention.maxBytes = Math.round(Number(size[1]) * 1024 ** (unit === "KB" ? 1 : unit === "MB" ? 2 : 3))
    } else {
      return Effect.fail(
        new UsageError({
          problem: `--trace-retention ${flag.value} is not a retention: write an age and a size such as 7d,200MB (or 30d, 1GB, off).`
        })
      )
    }
  }
  return Effect.succeed(retention)
}

const isDirectory = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true
const isFile = (path: string) => statSync(path, { throwIfNoEntry: false })?.isFile() === true

const limitsFlag = (name: string, value: Option.Option<string>) =>
  Option.isNone(value)
    ? Effect.succeed(undefined)
    : Option.match(Profile.parseLimits(value.value), {
        onNone: () =>
          Effect.fail(
            new UsageError({
              problem: `--${name} ${value.value} is not a list of limits: write them as 10/min+3,200/h.`
            })
          ),
        onSome: (limits) => Effect.succeed(limits)
      })

const toolLimitsFlag = (value: Option.Option<string>) =>
  Effect.gen(function* () {
    if (Option.isNone(value)) return undefined
    const out: Array<readonly [string, ReadonlyArray<import("@ugent/wrappers").Limit>]> = []
    for (const part of value.value.split(";").filter((p) => p.trim() !== "")) {
      const eq = part.indexOf("=")
      const limits = eq < 0 ? Option.none() : Profile.parseLimits(part.slice(eq + 1))
      if (eq < 0 || Option.isNone(limits)) {
        return yield* new UsageError({
          problem: `--rate-tool ${part} is not a pattern with limits: write it as world.tools.file.read=5/min.`
        })
      }
      out.push([part.slice(0, eq).trim(), limits.value] as const)
    }
    return out
  })

const durationFlag = (value: Option.Option<string>, flag = "timeout") => {
  if (Option.isNone(value)) return Effect.succeed(undefined)
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?|h|hours?)?$/.exec(value.value.trim())
  if (m === null) {
    return Effect.fail(
      new UsageError({ problem: `--${flag} ${value.value} is not a duration: write it as 30s or 2min.` })
    )
  }
  const unit = m[2] ?? "s"
  const factor = unit === "ms" ? 1 : unit.startsWith("s") ? 1000 : unit.startsWith("m") ? 60_000 : 3_600_000
  return Effect.succeed(Number(m[1]) * factor)
}

const sandboxUserFlag = (value: Option.Option<string>) => {
  if (Option.isNone(value)) return Effect.succeed(undefined)
  const m = /^(\d+)(?::(\d+))?$/.exec(value.value.trim())
  if (m === null || Number(m[1]) === 0) {
    return Effect.fail(
      new UsageError({
        problem: `--sandbox-user ${value.value} is not an unprivileged user: write it as uid:gid (e.g. 1000:1000), never 0.`
      })
    )
  }
  return Effect.succeed({ uid: Number(m[1]), gid: Number(m[2] ?? m[1]) })
}

const loopFlag = (value: Option.Option<string>) =>
  Option.isNone(value)
    ? Effect.succeed(undefined)
    : Option.match(Profile.parseLoop(value.value), {
        onNone: () =>
          Effect.fail(
            new UsageError({
              problem: `--loop ${value.value} is not a loop setting: write it as 3/1min (three repeats within a minute) or off.`
            })
          ),
        onSome: (loop) => Effect.succeed(loop)
      })

/** The recipe's mounts (a relative cwd from the recipe's directory), then the flags'; each well-formed, each name once. */
const mountsOf = (flags: Common, recipe: Recipe.Recipe | undefined) =>
  Effect.gen(function* () {
    const fromRecipe = Mounts.fromRecipe(
      recipe?.mounts,
      Option.isSome(flags.recipe) ? dirname(resolve(flags.recipe.value)) : process.cwd()
    )
    if (Mounts.isMountError(fromRecipe)) return yield* new UsageError({ problem: fromRecipe.message })
    const mounts = [...fromRecipe]
    for (const flag of flags.mount) {
      const mount = Mounts.parse(flag)
      if (Mounts.isMountError(mount)) return yield* new UsageError({ problem: `--mount: ${mount.message}` })
      mounts.push(mount)
    }
    const problem = Mounts.checkAll(mounts)
    if (problem !== undefined) return yield* new UsageError({ problem: problem.message })
    return mounts
  })

/**
 * Reads the flags into a server's options. Commands that call tools use the
 * workspace's proof key (so proofs printed by one `ugent` process are
 * accepted by the next); `fallbackProfile` is the command's default profile.
 *
 * @category configuration
 * @since 0.1.0
 */
export const setupOf = (
  flags: Common,
  defaults: {
    readonly stores: "memory" | "sqlite"
    readonly proofKey: boolean
    readonly profile: Profile.Profile
    /** Whether the root's state directory is made now (not when the root is known only later, from the client). */
    readonly prepare?: boolean | undefined
  }
): Effect.Effect<Server.Options, UsageError> =>
  Effect.gen(function* () {
    const root = resolve(Option.getOrElse(flags.root, () => process.cwd()))
    if (!isDirectory(root)) return yield* new UsageError({ problem: `The root ${root} is not a directory.` })
    if (flags.observer.trim() === "") return yield* new UsageError({ problem: "--observer needs a name." })
    const trust = Option.getOrUndefined(Trust.parse(flags.trust))
    if (trust === undefined) {
      return yield* new UsageError({
        problem: `--trust ${flags.trust} is not a trust level: give L0, L1, L2 or L3 (or 0..3).`
      })
    }
    if (Option.isSome(flags.recipe) && !isFile(resolve(flags.recipe.value))) {
      return yield* new UsageError({ problem: `The recipe file ${flags.recipe.value} does not exist.` })
    }
    const recipe = Option.isSome(flags.recipe)
      ? yield* Recipe.load(resolve(flags.recipe.value)).pipe(
          Effect.mapError((e) => new UsageError({ problem: e.message }))
        )
      : undefined
    // The recipe's modules resolve from its own directory, the flags' from the current one.
    const extraFamilies = yield* Effect.all([
      Families.loadAll(recipe?.families ?? [], {
        from: Option.isSome(flags.recipe) ? dirname(resolve(flags.recipe.value)) : process.cwd()
      }),
      Families.loadAll(flags.family, { from: process.cwd() })
    ]).pipe(
      Effect.map((loaded) => loaded.flat()),
      Effect.mapError((e) => new UsageError({ problem: e.message }))
    )
    const mounts = yield* mountsOf(flags, recipe)
    const stores = yield* storesOf(flags.stores, defaults.stores)
    const retention = yield* retentionFlag(flags.traceRetention)
    if (stores === "sqlite" && defaults.prepare !== false) {
      yield* State.prepare(root).pipe(Effect.mapError((e) => new UsageError({ problem: e.message })))
    }
    if (flags.unsandboxed && trust !== 3) {
      return yield* new UsageError({
        problem:
          "--dangerously-run-shell-unsandboxed needs --trust L3: an unsandboxed shell runs anything with your user's rights."
      })
    }
    if (Option.isSome(flags.budget) && flags.budget.value < 100) {
      return yield* new UsageError({
        problem: `--budget ${flags.budget.value} is too small: give at least 100 tokens.`
      })
    }
    return {
      root,
      trust,
      recipe,
      extraFamilies,
      mounts,
      stores,
      traces: { payloads: flags.tracePayloads, retention },
      audit: { sync: flags.auditSync },
      redis: Option.getOrUndefined(flags.redis),
      onStoreError: flags.onStoreError,
      observerId: flags.observer,
      profile: Option.getOrUndefined(flags.profile),
      fallbackProfile: defaults.profile,
      limits: {
        global: yield* limitsFlag("rate-global", flags.rateGlobal),
        caller: yield* limitsFlag("rate-caller", flags.rateCaller),
        tool: yield* toolLimitsFlag(flags.rateTool)
      },
      timeout: yield* durationFlag(flags.timeout),
      loop: yield* loopFlag(flags.loop),
      budgetTokens: Option.getOrUndefined(flags.budget),
      shellNetwork: flags.shellNetwork ? true : undefined,
      unsandboxed: flags.unsandboxed ? Sandbox.unsandboxedConsent : undefined,
      sandboxUser: yield* sandboxUserFlag(flags.sandboxUser),
      proofKey: defaults.proofKey ? "workspace" : undefined,
      proofMaxAge:
        Option.isSome(flags.proofMaxAge) && flags.proofMaxAge.value.trim() === "off"
          ? (false as const)
          : yield* durationFlag(flags.proofMaxAge, "proof-max-age")
    }
  })

// ---------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------

const printJson = (value: unknown) => Console.log(JSON.stringify(value))

/** Prints an error of a kind (as JSON on stdout with --json, else one line on stderr) and fails with it. */
const reported =
  (kind: "usage" | "model") =>
  (asJson: boolean) =>
  <E extends { readonly _tag: string; readonly message: string }>(error: E) =>
    Effect.andThen(
      asJson
        ? printJson({ ok: false, error: { _tag: error._tag, message: error.message }, kind })
        : Console.error(`ugent: ${error.message}`),
      Effect.fail(error)
    )

/** A usage error, said in one line (or one JSON object), then failed with. */
const usage = reported("usage")

/** On a terminal, says what is running when a call takes more than a second; silent when piped. */
const withProgress = <A, E, R>(label: string, effect: Effect.Effect<A, E, R>) =>
  process.stderr.isTTY !== true
    ? effect
    : Effect.gen(function* () {
        const notice = yield* Effect.forkChild(Effect.delay(Console.error(`ugent: ${label}…`), "1 second"))
        return yield* Effect.ensuring(effect, Fiber.interrupt(notice))
      })

/**
 * Confirmations and questions go to the person at the terminal, when standard
 * input is one and is not the command's own input.
 */
const askOnTerminal =
  (stdinFree: boolean) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    stdinFree ? Effect.provideService(effect, Human.Current, Human.terminal()) : effect

const firstSentence = (s: string) => {
  const m = /^(.*?[.!?])(\s+(?=[A-Z`])|$)/.exec(s)
  return m === null ? s : m[1]!
}

/**
 * A refusal in the words of the command line: the person running `ugent` is
 * the operator, so a level too low is lifted with `--trust`, not by asking.
 */
const forCli = (outcome: Invoke.Outcome): Invoke.Outcome => {
  if (outcome.ok || outcome.error._tag !== "TrustDenied") return outcome
  const { tool, required, actual, reason } = outcome.error as {
    readonly tool?: unknown
    readonly required?: unknown
    readonly actual?: unknown
    readonly reason?: unknown
  }
  if (typeof required !== "number" || typeof actual !== "number") return outcome
  const why = typeof reason === "string" ? ` (${reason})` : ""
  const message = `${String(tool)} needs trust L${required}${why}, and this command runs at L${actual}. Run it again with --trust L${required}, or use a read-only alternative.`
  return { ...outcome, error: { ...outcome.error, message } }
}

const printOutcome = (raw: Invoke.Outcome, asJson: boolean) =>
  Effect.gen(function* () {
    const outcome = forCli(raw)
    if (asJson) yield* printJson(outcome)
    else if (outcome.ok) yield* Console.log(JSON.stringify(outcome.result, null, 2))
    else yield* Console.error(`ugent: ${outcome.error._tag}: ${outcome.error.message}`)
    if (!outcome.ok) return yield* new CallFailed({ path: outcome.path, tag: outcome.error._tag })
  })

/** Where the outside families a conflict names were loaded from, as a sentence (empty for built-in ones). */
const originsOf = (conflict: Registry.FamilyConflict, options: Server.Options | undefined): string => {
  const named = new Set(conflict.reason === "name" ? [conflict.subject] : conflict.families)
  const origins = (options?.extraFamilies ?? []).flatMap((family) => {
    const module = named.has(family.name) ? Families.origin(family) : undefined
    return module === undefined ? [] : [` The family ${family.name} is loaded from ${module}.`]
  })
  return origins.join("")
}

/** A store, a service or a port that cannot start is a configuration problem (exit 2). */
const startupProblem = (e: unknown, options?: Server.Options): UsageError => {
  if (e instanceof UsageError) return e
  // The families' own errors say what is wrong and what to do.
  if (e instanceof Families.FamilyError) return new UsageError({ problem: e.message })
  if (e instanceof Mounts.MountError) return new UsageError({ problem: e.message })
  if (e instanceof Registry.FamilyConflict) return new UsageError({ problem: e.message + originsOf(e, options) })
  const own = ToolError.messageOf(e)
  // Some platform errors have no message of their own (only a type id); their cause says what happened.
  const text =
    own === "" || own.startsWith("~")
      ? [
          Predicate.hasProperty(e, "_tag") ? String(e._tag) : "Error",
          Predicate.hasProperty(e, "cause") ? ToolError.messageOf(e.cause) : undefined
        ]
          .filter((part) => part !== undefined && part !== "")
          .join(": ")
      : own
  return new UsageError({ problem: `The server could not start: ${text.replace(/\.$/, "")}.` })
}

// Each command loads the projection it runs on when it runs: `ugent mcp` does
// not load the HTTP server, and list, describe, invoke and exec neither.
const loadHttp = Effect.promise(() => import("./Http.ts"))
const loadMcp = Effect.promise(() => import("./Mcp.ts"))
const loadHttpServer = Effect.promise(() => import("effect/http/HttpServer"))

const onRoad = <A>(
  options: Server.Options,
  effect: Effect.Effect<A, never, Server.Services>
): Effect.Effect<A, UsageError> =>
  Effect.provide(effect, Server.layer(options)).pipe(Effect.mapError((e) => startupProblem(e, options)))

/**
 * Runs `effect` on the road with the model `UGENT_MODEL` configures: a wrong provider, key, URL or model is
 * `ModelNotReady` before anything runs; a model that fails mid-way is the `ModelFailed` result, not a failure.
 */
const onRoadWithModel = <A>(
  setup: Server.Options,
  effect: Effect.Effect<A, AiError.AiError, Server.Services | LanguageModel.LanguageModel>
) =>
  Effect.gen(function* () {
    yield* Model.check.pipe(Effect.mapError((e) => new ModelNotReady({ problem: e.message })))
    const model = yield* LanguageModel.LanguageModel
    return yield* onRoad(
      { ...setup, model: Layer.succeed(LanguageModel.LanguageModel, model) },
      effect.pipe(
        Effect.provideService(LanguageModel.LanguageModel, model),
        Effect.map((value) => ({ _tag: "Ran" as const, value })),
        Effect.catch((error) => Effect.succeed({ _tag: "ModelFailed" as const, error })),
        askOnTerminal(true)
      )
    )
  }).pipe(
    Effect.provide(Model.fromEnv()),
    Effect.mapError((e) => (e._tag === "ModelConfigError" ? new ModelNotReady({ problem: e.message }) : e))
  )

/** A model that is not ready, said in one line (or one JSON object), then the exit code 2. */
const modelNotReady = reported("model")

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

const list = Command.make("list", { ...common, json }, (flags) =>
  Effect.gen(function* () {
    const setup = yield* setupOf(flags, { stores: "memory", proofKey: false, profile: "local" })
    const listing = yield* onRoad(setup, Effect.flatMap(Invoker, Catalog.listing))
    if (flags.json) return yield* printJson(listing)
    const width = Math.max(0, ...listing.paths.map((p) => p.path.length))
    for (const p of listing.paths) {
      yield* Console.log(
        `${p.path.padEnd(width)}  L${p.requiredTrust}${p.requiresApproval ? "+approval" : ""}  ${firstSentence(p.description)}`
      )
    }
    if (listing.paths.length === 0) yield* Console.error("ugent: no path is offered to this caller.")
  }).pipe(Effect.catchTag("UsageError", usage(flags.json)))
).pipe(
  Command.withDescription("List the paths this caller may use (the same check invoke enforces)"),
  Command.withExamples([
    { command: "ugent list", description: "What an L0 caller may call in the current directory" },
    { command: "ugent list --trust L1 --recipe recipe.json --json", description: "As JSON, for an L1 caller" }
  ])
)

const describe = Command.make(
  "describe",
  {
    path: Argument.String("path").pipe(
      Argument.withDescription("A path (world.tools.file.read) or its provider-safe name (world_tools_file_read)")
    ),
    ...common,
    json
  },
  (flags) =>
    Effect.gen(function* () {
      const setup = yield* setupOf(flags, { stores: "memory", proofKey: false, profile: "local" })
      const described = yield* onRoad(
        setup,
        Effect.flatMap(Invoker, (road) => Catalog.describe(road, flags.path))
      )
      if (!described.ok) return yield* printOutcome(described, flags.json)
      const d = described.description
      if (flags.json) return yield* printJson(d)
      const effects = Object.entries(d.effects)
        .filter(([, on]) => on)
        .map(([k]) => k)
      yield* Console.log(`${d.path} (${d.providerName})`)
      yield* Console.log(`  ${d.description}`)
      yield* Console.log(
        `  trust: L${d.requiredTrust}${d.requiredTrust !== d.toolTrust ? ` (the tool's own: L${d.toolTrust})` : ""}${d.requiresApproval ? ", every call needs approval" : ""}`
      )
      yield* Console.log(`  effects: ${effects.length > 0 ? effects.join(", ") : "none"}`)
      yield* Console.log(`  input: ${JSON.stringify(d.input, null, 2).replaceAll("\n", "\n  ")}`)
      yield* Console.log(`  output: ${JSON.stringify(d.output, null, 2).replaceAll("\n", "\n  ")}`)
    }).pipe(Effect.catchTag("UsageError", usage(flags.json)))
).pipe(Command.withDescription("Describe a path: its input, output and error schemas, trust level and effects"))

const readStdin = Effect.promise(() => readAll(process.stdin))

const parseInput = (raw: string): Effect.Effect<unknown, UsageError> =>
  Effect.try({
    try: () => JSON.parse(raw) as unknown,
    catch: (e) =>
      new UsageError({
        problem: `--input is not valid JSON (${e instanceof Error ? e.message : String(e)}): write it as '{"path": "README.md"}'.`
      })
  })

const invoke = Command.make(
  "invoke",
  {
    path: Argument.String("path").pipe(
      Argument.withDescription(
        'A path, a provider-safe name, or a pipeline "a >> b" (each step gets the previous output)'
      )
    ),
    input: Flag.String("input").pipe(
      Flag.withAlias("i"),
      Flag.withDescription("The input as JSON (default {}); - reads it from stdin"),
      Flag.optional
    ),
    ...common,
    json
  },
  (flags) =>
    Effect.gen(function* () {
      const raw = Option.isNone(flags.input)
        ? undefined
        : flags.input.value === "-"
          ? yield* readStdin
          : flags.input.value
      const input = raw === undefined ? {} : yield* parseInput(raw)
      const setup = yield* setupOf(flags, { stores: "sqlite", proofKey: true, profile: "local" })
      const outcome = yield* onRoad(
        setup,
        withProgress(
          `running ${flags.path}`,
          Effect.flatMap(Invoker, (road) => road.invoke({ path: flags.path, input }))
        ).pipe(askOnTerminal(Option.isNone(flags.input) || flags.input.value !== "-"))
      )
      yield* printOutcome(outcome, flags.json)
    }).pipe(Effect.catchTag("UsageError", usage(flags.json)))
).pipe(
  Command.withDescription("Invoke a path (or a pipeline) through the road: policy, trust, rate limits, audit, events"),
  Command.withExamples([
    {
      command: `ugent invoke world.tools.file.read --input '{"path": "README.md"}'`,
      description: "Read a file"
    },
    {
      command: `ugent invoke "world.tools.file.read >> world.tools.file.edit --edits=[...]" --input '{"path": "a.md"}' --trust L1`,
      description: "A pipeline: read, then edit with the read's proof"
    }
  ])
)

const exec = Command.make(
  "exec",
  {
    text: Flag.String("text").pipe(
      Flag.withDescription("Model text with EXECUTE: lines, <tool_call> blocks or pipelines (default: stdin)"),
      Flag.optional
    ),
    ...common,
    json
  },
  (flags) =>
    Effect.gen(function* () {
      const text = Option.isSome(flags.text) ? flags.text.value : yield* readStdin
      const setup = yield* setupOf(flags, { stores: "sqlite", proofKey: true, profile: "local" })
      const outcomes = (yield* onRoad(
        setup,
        withProgress(
          "running the calls",
          Effect.flatMap(Invoker, (road) => road.invokeText(text))
        ).pipe(askOnTerminal(Option.isSome(flags.text)))
      )).map(forCli)
      const failed = outcomes.find((o) => !o.ok)
      if (flags.json) yield* printJson({ ok: failed === undefined, outcomes })
      else {
        for (const o of outcomes) {
          if (o.ok) yield* Console.log(`${o.path}: ${JSON.stringify(o.result, null, 2)}`)
          else yield* Console.error(`ugent: ${o.path || "(parse)"}: ${o.error._tag}: ${o.error.message}`)
        }
        if (outcomes.length === 0) yield* Console.error("ugent: the text has no call in it.")
      }
      if (failed !== undefined && !failed.ok) {
        return yield* new CallFailed({ path: failed.path, tag: failed.error._tag })
      }
    }).pipe(Effect.catchTag("UsageError", usage(flags.json)))
).pipe(
  Command.withDescription(
    "Run every call in a model's text (EXECUTE: lines, <tool_call> blocks), up to the recipe's calls per response"
  )
)

/** The workspace named the way reference MCP servers take it (`ugent mcp /path`), or by `--root`: one of them. */
const positionalRoot = (flags: Common, positional: Option.Option<string>): Effect.Effect<Common, UsageError> => {
  if (Option.isNone(positional)) return Effect.succeed(flags)
  if (Option.isSome(flags.root) && resolve(flags.root.value) !== resolve(positional.value)) {
    return Effect.fail(
      new UsageError({
        problem: `Two roots: ${positional.value} and --root ${flags.root.value}. ugent serves one workspace: give one of them.`
      })
    )
  }
  return Effect.succeed({ ...flags, root: positional })
}

const mcp = Command.make(
  "mcp",
  {
    rootArgument: Argument.String("root").pipe(
      Argument.withDescription("The workspace root, as reference MCP servers take it (the same as --root)"),
      Argument.optional
    ),
    ...common,
    outputSchemas,
    maxMessageBytes
  },
  (all) =>
    Effect.gen(function* () {
      // Stdout carries only protocol messages: what a family's own code prints (--family) goes to stderr.
      globalThis.console = new console.Console({ stdout: process.stderr, stderr: process.stderr })
      const flags = { ...all, ...(yield* positionalRoot(all, all.rootArgument)) }
      // Without a root the root is known once the client names its roots: its state is made there, then.
      const setup = yield* setupOf(flags, {
        stores: "sqlite",
        proofKey: true,
        profile: "local",
        prepare: Option.isSome(flags.root)
      })
      const Mcp = yield* loadMcp
      const options = {
        outputSchemas: flags.outputSchemas,
        maxMessageBytes: Option.getOrUndefined(flags.maxMessageBytes)
      }
      // Traces go to OpenTelemetry when the standard OTEL_* variables ask for it.
      const telemetry = Telemetry.layer({ serviceVersion: version })
      // The server ends when the client closes stdin.
      if (Option.isNone(flags.root)) {
        // No root given: the root the client names (its roots), else the current directory.
        const at = (root: string) =>
          Layer.unwrap(
            Effect.andThen(
              setup.stores === "sqlite" ? State.prepare(root) : Effect.void,
              Effect.try({ try: () => Server.layer({ ...setup, root }), catch: (e) => e })
            )
          )
        return yield* Mcp.runStdioRooted({ ...options, root: setup.root, layer: at }).pipe(
          Effect.provide(telemetry),
          Effect.mapError((e) => startupProblem(e, setup))
        )
      }
      yield* Mcp.runStdio(options).pipe(
        Effect.provide(Server.layer(setup)),
        Effect.provide(telemetry),
        Effect.mapError((e) => startupProblem(e, setup))
      )
    }).pipe(Effect.catchTag("UsageError", usage(false)))
).pipe(
  Command.withDescription("An MCP server on stdio (stdout carries only protocol messages)"),
  Command.withExamples([
    { command: "ugent mcp /path/to/project --trust L1", description: "Serve a project to an MCP client on stdio" }
  ])
)

/** `--room` and `--instance`: a room keeps its sessions in Redis, so it needs `--redis`; an instance is named. */
const roomOf = (
  flags: { readonly room: Option.Option<string>; readonly instance: Option.Option<string> },
  setup: Server.Options
): Effect.Effect<Pick<Server.Options, "room" | "instance">, UsageError> => {
  const room = Option.getOrUndefined(flags.room)
  const instance = Option.getOrUndefined(flags.instance)
  const name = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
  if (room !== undefined && !name.test(room)) {
    return Effect.fail(
      new UsageError({ problem: `--room ${room} is not a name: use letters, digits, '.', '_' and '-' (at most 64).` })
    )
  }
  if (instance !== undefined && !name.test(instance)) {
    return Effect.fail(
      new UsageError({
        problem: `--instance ${instance} is not a name: use letters, digits, '.', '_' and '-' (at most 64).`
      })
    )
  }
  if (room !== undefined && setup.redis === undefined) {
    return Effect.fail(
      new UsageError({
        problem: `--room ${room} keeps the room's sessions in Redis: give --redis redis://… as well (the same on every instance).`
      })
    )
  }
  return Effect.succeed({
    room,
    instance: instance ?? (room === undefined ? undefined : SessionState.defaultInstance())
  })
}

/** A callers file and the flags that would silently override it, or a shell no caller's level may have. */
const callersFit = (callers: ReadonlyArray<Callers.Configured>, options: Server.Options) =>
  Effect.gen(function* () {
    const own = (key: "rateLimits" | "resultBudgetTokens") =>
      callers.filter((c) => c.recipe[key] !== undefined && c.recipe[key] !== options.recipe?.[key]).map((c) => c.id)
    if (options.limits?.caller !== undefined && own("rateLimits").length > 0) {
      return yield* new UsageError({
        problem: `--rate-caller would override the rate limits of ${own("rateLimits").join(", ")} in the callers file: give each caller its limits in the file, or drop the flag.`
      })
    }
    if (options.budgetTokens !== undefined && own("resultBudgetTokens").length > 0) {
      return yield* new UsageError({
        problem: `--budget would override the result budget of ${own("resultBudgetTokens").join(", ")} in the callers file: give each caller its budget in the file, or drop the flag.`
      })
    }
    const below = callers.filter((c) => c.trust !== 3).map((c) => c.id)
    if (options.unsandboxed !== undefined && below.length > 0) {
      return yield* new UsageError({
        problem: `An unsandboxed shell is served only to L3 callers, and ${below.join(", ")} are not L3.`
      })
    }
  })

const serve = Command.make(
  "serve",
  {
    port: Flag.Int("port").pipe(
      Flag.withDescription("The port (default 7345; 0 picks a free one)"),
      Flag.withDefault(7345)
    ),
    host: Flag.String("host").pipe(
      Flag.withDescription("The address to bind (default 127.0.0.1: loopback only)"),
      Flag.withDefault("127.0.0.1")
    ),
    room: Flag.String("room").pipe(
      Flag.withDescription(
        "Join a room of several servers behind one load balancer: its session state (remembered proofs, plan mode, MCP sessions) is kept in Redis (--redis) under this name, so any instance serves any request of any session. Every instance needs the same UGENT_PROOF_KEY, recipe and limits (one that differs does not start); give --stores a postgres:// URL to share audit, traces, tasks and working memory"
      ),
      Flag.optional
    ),
    instance: Flag.String("instance").pipe(
      Flag.withDescription("This server's name in the audit and traces (default <host>-<pid>)"),
      Flag.optional
    ),
    callers: Flag.String("callers").pipe(
      Flag.withDescription(
        "A callers file (JSON): several callers on this server, each named by its own bearer token (stored as its SHA-256, or read from an environment variable or a file), each with its trust level, recipe, rate limits and result budget"
      ),
      Flag.optional
    ),
    outputSchemas,
    ...common
  },
  (flags) =>
    Effect.gen(function* () {
      const setup = yield* setupOf(flags, { stores: "sqlite", proofKey: true, profile: "team" })
      const options = { ...setup, ...(yield* roomOf(flags, setup)) }
      const callers = Option.isSome(flags.callers)
        ? yield* Callers.load(resolve(flags.callers.value), { base: options.recipe }).pipe(
            Effect.mapError((e) => new UsageError({ problem: e.message }))
          )
        : undefined
      if (callers !== undefined) yield* callersFit(callers, options)
      const [Http, Mcp, HttpServer] = yield* Effect.all([loadHttp, loadMcp, loadHttpServer])
      if (!Http.isLoopback(flags.host) && process.env.UGENT_TOKEN === undefined && callers === undefined) {
        yield* Console.error(
          `ugent: warning: ${flags.host} is not a loopback address; whoever reaches it calls as "${options.observerId}" at L${options.trust} (set UGENT_TOKEN to require a token).`
        )
      }
      const token = process.env.UGENT_TOKEN === "" ? undefined : process.env.UGENT_TOKEN
      const approverToken = process.env.UGENT_APPROVER_TOKEN === "" ? undefined : process.env.UGENT_APPROVER_TOKEN
      const app = Http.serve(
        { ...options, port: flags.port, host: flags.host, token, approverToken, callers },
        Mcp.layerHttp({ path: "/mcp", askPending: approverToken !== undefined, outputSchemas: flags.outputSchemas })
      )
      yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(app)
          const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
          yield* Console.error(
            `ugent: serving ${url} (API ${url}/v1, OpenAPI ${url}/v1/openapi.json, MCP ${url}/mcp) as ${options.observerId} at L${options.trust}, root ${options.root}${token !== undefined ? ", token required" : ""}`
          )
          if (options.room !== undefined) {
            yield* Console.error(
              `ugent: instance ${options.instance} of the room ${options.room}: sessions are kept in Redis${typeof options.stores === "object" ? ", records in PostgreSQL" : "; give --stores postgres://… to share audit, traces, tasks and working memory"}`
            )
          }
          // Who may call, by id and level: a token is never printed.
          if (callers !== undefined) {
            yield* Console.error(
              `ugent: callers by their tokens: ${callers.map((c) => `${c.id} (L${c.trust}${c.recipe.rateLimits?.perMinute !== undefined ? `, ${c.recipe.rateLimits.perMinute}/min` : ""}${c.root !== undefined && c.root !== options.root ? `, project ${c.root}` : ""})`).join(", ")}${token === undefined ? "; every request needs a caller's token" : ""}`
            )
          }
          const settings = Profile.settings(options.recipe ?? {}, Server.overridesOf(options), "team")
          yield* Console.error(`ugent: ${Profile.describe(settings)}`)
          // Which profile runs, and why: the default is said as such, with the others to choose from.
          if (options.profile === undefined && options.recipe?.profile === undefined) {
            yield* Console.error(
              "ugent: team is serve's default profile (a few people's agents); --profile shared limits a room of untrusted agents (5 reads a minute each), --profile local lifts every limit."
            )
          }
          return yield* Effect.never
        })
      ).pipe(
        Effect.provide(Telemetry.layer({ serviceVersion: version })),
        Effect.mapError((e) => startupProblem(e, options))
      )
    }).pipe(Effect.catchTag("UsageError", usage(false)))
).pipe(
  Command.withDescription(
    "Serve the HTTP JSON API and the MCP endpoint (/mcp) on one server; with UGENT_TOKEN set, requests need Authorization: Bearer <token>"
  )
)

// ---------------------------------------------------------------------------
// ugent agent
// ---------------------------------------------------------------------------

const clipped = (s: string, n: number) => {
  const one = s.replace(/\s+/g, " ").trim()
  return one.length > n ? `${one.slice(0, n)}…` : one
}

/** A step as the documents show it: `Step 3/5 (id, time)`, then each call with its size or failure and time. */
const printStep = (step: Agent.Step) =>
  Effect.gen(function* () {
    const said = step.text.trim() === "" ? "" : `: ${clipped(step.text, 200)}`
    yield* Console.error(`ugent: ${Agent.stepHeading(step)}${said}`)
    for (const call of step.calls) {
      const o = call.outcome
      const why = o !== undefined && !o.ok ? `: ${clipped(firstSentence(o.error.message), 160)}` : ""
      yield* Console.error(`ugent:   ${Agent.callLine(call)}${why}`)
    }
  })

/** The whole run as JSON: every step, each call with its input and outcome. */
const transcriptOf = (result: Agent.Result) => ({
  ok: result._tag === "Complete",
  status: result._tag === "Complete" ? "complete" : "incomplete",
  id: result.id,
  text: result.text,
  ...(result._tag === "Incomplete" ? { missing: result.missing, message: result.message } : {}),
  usage: result.usage,
  durationMillis: result.durationMillis,
  steps: result.steps.map((s) => ({
    id: s.id,
    index: s.index,
    of: s.of,
    text: s.text,
    finishReason: s.finishReason,
    usage: s.usage,
    durationMillis: s.durationMillis,
    calls: s.calls.map((c) => ({
      id: c.id,
      name: c.name,
      path: c.path ?? null,
      input: c.input,
      outcome: c.outcome ?? null,
      ...(c.durationMillis !== undefined ? { durationMillis: c.durationMillis } : {}),
      ...(c.resultBytes !== undefined ? { resultBytes: c.resultBytes } : {})
    }))
  }))
})

const agent = Command.make(
  "agent",
  {
    task: Argument.String("task").pipe(
      Argument.withDescription("The task, in words (with --resume: what to tell the run, optional)"),
      Argument.optional
    ),
    resume: Flag.String("resume").pipe(
      Flag.withDescription("Go on with a run that waited on approvals (its id, as ugent agent printed it)"),
      Flag.optional
    ),
    steps: Flag.Int("steps").pipe(
      Flag.withDescription("The most steps (model responses, each with the calls it asks for); default 10"),
      Flag.withDefault(Agent.defaults.maxSteps)
    ),
    maxTokens: Flag.Int("max-tokens").pipe(
      Flag.withDescription("The most tokens (input and output, as the model reports them) over the run"),
      Flag.optional
    ),
    calls: Flag.Literals("calls", ["native", "text"]).pipe(
      Flag.withDescription(
        "How the model calls tools: native (its API's tool calling, default) or text (EXECUTE: lines, <tool_call> and <tool_use> blocks)"
      ),
      Flag.withDefault("native" as const)
    ),
    ...common,
    timeout: Flag.String("timeout").pipe(
      Flag.withDescription("The whole run's time limit, e.g. 90s, 10min (default 5min)"),
      Flag.optional
    ),
    json
  },
  (flags) =>
    Effect.gen(function* () {
      if (flags.steps < 0)
        return yield* new UsageError({ problem: `--steps ${flags.steps} is negative: give 0 or more.` })
      const timeout = yield* durationFlag(flags.timeout)
      // --timeout is the run's; each call keeps the profile's own limit (and stops when the run does).
      const setup = yield* setupOf(
        { ...flags, timeout: Option.none() },
        { stores: "sqlite", proofKey: true, profile: "local" }
      )
      const resumed = Option.isSome(flags.resume)
        ? yield* AgentRuns.load(setup.root, flags.resume.value).pipe(
            Effect.mapError((e) => new UsageError({ problem: e.message }))
          )
        : undefined
      if (resumed === undefined && Option.isNone(flags.task)) {
        return yield* new UsageError({ problem: "No task: give one in words, or --resume <run> to go on with one." })
      }
      const result = yield* onRoadWithModel(
        setup,
        Agent.run({
          prompt:
            resumed === undefined
              ? Option.getOrThrow(flags.task)
              : AgentRuns.resumePrompt(resumed, Option.getOrUndefined(flags.task)),
          maxSteps: flags.steps,
          maxTokens: Option.getOrUndefined(flags.maxTokens),
          timeout,
          calls: flags.calls,
          onStep: flags.json ? undefined : printStep
        })
      )
      if (result._tag === "ModelFailed") {
        const error = { _tag: result.error._tag, message: result.error.message }
        if (flags.json) yield* printJson({ ok: false, status: "failed", error })
        else yield* Console.error(`ugent: the model failed: ${result.error.message}`)
        return yield* new CallFailed({ path: "agent", tag: "AiError" })
      }
      const run = result.value
      // A run whose calls wait on a person is kept, so it can go on once they answer.
      const pending = AgentRuns.pendingOf(run)
      const waiting = pending.length === 0 ? undefined : yield* AgentRuns.store(setup.root, run, pending)
      if (waiting !== undefined && !flags.json) {
        yield* Console.error(
          `ugent: the run waits on ${pending.join(", ")}: answer with \`ugent approve ${pending.length === 1 ? pending[0] : "<id>"}\` (or --deny), then go on with \`ugent agent --resume ${waiting}\`.`
        )
      }
      if (flags.json) yield* printJson({ ...transcriptOf(run), ...(waiting === undefined ? {} : { waiting, pending }) })
      else if (run._tag === "Complete") yield* Console.log(run.text)
      else {
        if (run.text.trim() !== "") yield* Console.log(run.text)
        yield* Console.error(`ugent: ${run.message}`)
      }
      if (run._tag === "Incomplete") return yield* new CallFailed({ path: "agent", tag: "Incomplete" })
    }).pipe(
      Effect.catchTag("UsageError", usage(flags.json)),
      Effect.catchTag("ModelNotReady", modelNotReady(flags.json))
    )
).pipe(
  Command.withDescription(
    "Run one task with the model UGENT_MODEL names, to completion or budget: each step's calls go through the road; --json prints the transcript"
  ),
  Command.withExamples([
    {
      command: `UGENT_MODEL=anthropic:claude-sonnet-4-5 ugent agent "What changed since the last release?"`,
      description: "Read-only (L0): the model may read, search and inspect git"
    },
    {
      command: `ugent agent "Fix the typo in README.md" --trust L1 --steps 6 --timeout 2min --json`,
      description: "Allowed to write with a read proof; the whole transcript as JSON"
    },
    {
      command: "ugent approve ap-1234 && ugent agent --resume run-1a2b3c4d5e6f",
      description: "Go on with a run that waited on an approval, once it is answered"
    }
  ])
)

const sinceFlag = (value: string): Effect.Effect<number | undefined, UsageError> => {
  if (value === "all") return Effect.succeed(undefined)
  const m = /^(\d+)\s*(m|min|h|d)$/.exec(value.trim())
  if (m === null) {
    return Effect.fail(
      new UsageError({ problem: `--since ${value} is not a window: write it as 30m, 24h, 7d or all.` })
    )
  }
  const unit = m[2] === "d" ? 86_400_000 : m[2] === "h" ? 3_600_000 : 60_000
  return Effect.succeed(Date.now() - Number(m[1]) * unit)
}

const stats = Command.make(
  "stats",
  {
    since: Flag.String("since").pipe(
      Flag.withDescription("The window: 30m, 24h, 7d or all (default 24h)"),
      Flag.withDefault("24h")
    ),
    ...common,
    json
  },
  (flags) =>
    Effect.gen(function* () {
      const since = yield* sinceFlag(flags.since)
      const options = yield* setupOf(flags, { stores: "sqlite", proofKey: false, profile: "local" })
      // The latest calls, each with its result in a sentence and its size in tokens, as the audit has them, and the
      // other calls its caller considered with it (ghost alternatives), as its trace has them.
      const [analytics, after, traces] = yield* onRoad(
        options,
        Effect.gen(function* () {
          const audit = yield* AuditStore.AuditStore
          const analytics = yield* audit.analytics({ since })
          const after = (yield* audit.list({ since, limit: 40 })).filter((e) => e.phase === "after").slice(0, 10)
          const store = yield* TraceStore.TraceStore
          const traces = yield* Effect.forEach(after, (e) => Effect.map(store.get(e.callId), Option.getOrUndefined))
          return [analytics, after, traces] as const
        }).pipe(
          Effect.catch((e) => Effect.fail(startupProblem(e))),
          Effect.orDie
        )
      )
      const recent = after.map((e, i) => {
        const alternatives = traces[i]?.alternatives ?? []
        return alternatives.length > 0 ? { ...e, alternatives } : e
      })
      if (flags.json) return yield* printJson({ since: since ?? null, ...analytics, recent })
      yield* Console.log(renderStats(analytics, recent))
    }).pipe(Effect.catchTag("UsageError", usage(flags.json)))
).pipe(
  Command.withDescription(
    "The analytics of the audit store: calls, successes, refusals by reason, p50/p95 per path and per caller, each caller's calls of each path, failures grouped by error"
  )
)

// ---------------------------------------------------------------------------
// ugent approve: answer a stored approval request from the terminal
// ---------------------------------------------------------------------------

/** A stored request, as a person reads it before answering: id, who asks what, until when, and the change. */
const renderApproval = (a: ApprovalStore.Approval): string =>
  [
    `${a.id}  ${a.tool}  asked by ${a.observerId}  ${a.status}, expires ${new Date(a.expiresAt).toISOString()}`,
    `  ${a.arguments}`,
    ...a.files.map((f) => `  ${f.path}: ${f.hash === null ? "absent" : `sha256 ${f.hash.slice(0, 16)}…`}`),
    ...(a.preview === undefined
      ? []
      : a.preview
          .replace(/\n+$/, "")
          .split("\n")
          .map((l) => `  ${l}`))
  ].join("\n")

type Answered =
  | { readonly _tag: "Listed"; readonly pending: ReadonlyArray<ApprovalStore.Approval> }
  | { readonly _tag: "Answered"; readonly approval: ApprovalStore.Approval }
  | {
      readonly _tag: "Refused"
      readonly error: ApprovalStore.UnknownApproval | ApprovalStore.ApprovalExpired | ApprovalStore.AlreadyAnswered
    }

const approve = Command.make(
  "approve",
  {
    id: Argument.String("id").pipe(
      Argument.withDescription("The request's id (ap-…), as the refusal or GET /v1/pending names it"),
      Argument.optional
    ),
    deny: Flag.Boolean("deny").pipe(Flag.withDescription("Refuse the request instead"), Flag.withDefault(false)),
    ...common,
    json
  },
  (flags) =>
    Effect.gen(function* () {
      const options = yield* setupOf(flags, { stores: "sqlite", proofKey: false, profile: "local" })
      if (options.stores === "memory") {
        return yield* new UsageError({
          problem:
            "--stores memory holds no request of another process: answer against the workspace's store (sqlite, the default) or the server's postgres:// URL."
        })
      }
      const answered = yield* onRoad(
        options,
        Effect.gen(function* (): Effect.fn.Return<Answered, never, ApprovalStore.ApprovalStore | Invoker> {
          const store = yield* ApprovalStore.ApprovalStore
          // Only this workspace's requests: a store may be shared with servers of other workspaces.
          const root = (yield* Invoker).workspaceRoot
          if (Option.isNone(flags.id)) {
            const all = yield* Effect.orDie(store.pending(Date.now()))
            return { _tag: "Listed", pending: all.filter((a) => Approval.ofWorkspace(root, a)) }
          }
          const mine = yield* Effect.orDie(store.get(flags.id.value))
          if (mine !== undefined && !Approval.ofWorkspace(root, mine)) {
            return { _tag: "Refused", error: new ApprovalStore.UnknownApproval({ id: flags.id.value }) }
          }
          const decision = flags.deny ? "denied" : "approved"
          const result = yield* Effect.result(
            store.answer(flags.id.value, decision, { channel: "cli", now: Date.now() })
          )
          if (result._tag === "Success") return { _tag: "Answered", approval: result.success }
          if (result.failure._tag === "StoreError") return yield* Effect.die(result.failure)
          return { _tag: "Refused", error: result.failure }
        })
      )
      if (answered._tag === "Listed") {
        if (flags.json) return yield* printJson({ pending: answered.pending })
        if (answered.pending.length === 0) return yield* Console.log("No approval request is pending.")
        for (const a of answered.pending) yield* Console.log(renderApproval(a))
        return
      }
      if (answered._tag === "Refused") {
        const error = answered.error
        if (flags.json) yield* printJson({ ok: false, error: ToolError.toJson(error), kind: ToolError.kindOf(error) })
        else yield* Console.error(`ugent: ${error._tag}: ${error.message}`)
        return yield* new CallFailed({ path: "approve", tag: error._tag })
      }
      const a = answered.approval
      if (flags.json) return yield* printJson({ ok: true, approval: a })
      yield* Console.log(renderApproval(a))
      yield* Console.log(
        a.status === "approved"
          ? `Approved. The same call (${a.tool} with these arguments) now runs once, if the files still hold these bytes.`
          : "Denied. The call waiting on it is refused; made again, it is asked anew."
      )
    }).pipe(Effect.catchTag("UsageError", usage(flags.json)))
).pipe(
  Command.withDescription(
    "Answer a stored approval request (the workspace's store, or --stores postgres://…), or list the pending ones"
  ),
  Command.withExamples([
    { command: "ugent approve", description: "List the pending requests with their diffs" },
    { command: "ugent approve ap-1234abcd-56ef", description: "Approve one" },
    { command: "ugent approve ap-1234abcd-56ef --deny", description: "Refuse it" }
  ])
)

const recentLine = (e: AuditStore.AuditEntry & { readonly alternatives?: ReadonlyArray<string> }): string => {
  const outcome =
    e.status === "success"
      ? `${e.resultSummary ?? "ok"}${e.estimatedTokens !== undefined ? ` (~${e.estimatedTokens} tokens)` : ""}`
      : `${e.error?.tag ?? "failed"}: ${clipped(firstSentence(e.error?.message ?? ""), 120)}`
  const considered = e.alternatives === undefined ? "" : ` · also considered: ${e.alternatives.join(", ")}`
  return `  ${new Date(e.at).toISOString()} ${e.observerId.padEnd(12)} ${e.path.padEnd(28)} ${clipped(e.inputSummary, 60).padEnd(30)} → ${outcome}${considered}`
}

const renderStats = (
  a: AuditStore.AuditAnalytics,
  recent: ReadonlyArray<AuditStore.AuditEntry & { readonly alternatives?: ReadonlyArray<string> }> = []
): string => {
  const ms = (v: number | undefined) => (v === undefined ? "-" : `${v.toFixed(1)} ms`)
  const row = (s: AuditStore.AuditStats) =>
    `  ${s.key.padEnd(32)} ${String(s.calls).padStart(6)} calls ${String(s.successes).padStart(6)} ok ${String(s.refusals).padStart(5)} refused ${String(s.failures - s.refusals).padStart(5)} failed   p50 ${ms(s.p50DurationMillis)}  p95 ${ms(s.p95DurationMillis)}`
  const t = a.totals
  return [
    `Calls: ${t.calls} (${t.successes} succeeded, ${t.refusals} refused, ${t.failures - t.refusals} failed)`,
    "Refusals by reason:",
    ...(a.refusals.length === 0
      ? ["  (none)"]
      : a.refusals.map((r) => `  ${r.reason.padEnd(20)} ${r.kind.padEnd(13)} ${r.count}`)),
    "By path:",
    ...(a.byTool.length === 0 ? ["  (no calls)"] : a.byTool.map(row)),
    "By caller:",
    ...(a.byObserver.length === 0 ? ["  (no calls)"] : a.byObserver.map(row)),
    "By caller and path:",
    ...(a.byObserverTool.length === 0
      ? ["  (no calls)"]
      : a.byObserverTool.map(
          (p) =>
            `  ${p.observerId.padEnd(16)} ${p.path.padEnd(32)} ${String(p.calls).padStart(6)} calls ${String(p.successes).padStart(6)} ok ${String(p.refusals).padStart(5)} refused ${String(p.failures - p.refusals).padStart(5)} failed`
        )),
    "Failures by error:",
    ...(a.failures.length === 0
      ? ["  (none)"]
      : a.failures.map(
          (f) =>
            `  ${f.reason.padEnd(20)} ${(f.kind ?? "-").padEnd(13)} ${String(f.count).padStart(6)}   last ${new Date(f.lastAt).toISOString()}`
        )),
    "Recent calls:",
    ...(recent.length === 0 ? ["  (none)"] : recent.map(recentLine)),
    // A room's instances name themselves in the audit: which served what.
    ...(a.byInstance === undefined ? [] : ["By instance:", ...a.byInstance.map(row)])
  ].join("\n")
}

// ---------------------------------------------------------------------------
// ugent report: the Project Resurrection protocol
// ---------------------------------------------------------------------------

/**
 * Who writes `ugent report`: the model `UGENT_MODEL` names, unless
 * `--deterministic` is given or no model is named (then the deterministic
 * pipeline).
 *
 * **Example** (No model, then a model named)
 * ```ts
 * import { Cli } from "@ugent/agentese"
 * console.log(Cli.reportMode({ deterministic: false, env: {} }))
 * // => { mode: 'deterministic' }
 * console.log(Cli.reportMode({ deterministic: false, env: { UGENT_MODEL: "anthropic:claude-sonnet-4-5" } }))
 * // => { mode: 'model', model: 'anthropic:claude-sonnet-4-5' }
 * console.log(Cli.reportMode({ deterministic: true, env: { UGENT_MODEL: "x:y" } }))
 * // => { mode: 'deterministic' }
 * ```
 *
 * @category configuration
 * @since 0.2.0
 */
export const reportMode = (options: {
  readonly deterministic: boolean
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}): { readonly mode: "deterministic" } | { readonly mode: "model"; readonly model: string } => {
  const model = (options.env ?? process.env).UGENT_MODEL?.trim()
  return options.deterministic || model === undefined || model === ""
    ? { mode: "deterministic" }
    : { mode: "model", model }
}

const report = Command.make(
  "report",
  {
    ...common,
    json,
    deterministic: Flag.Boolean("deterministic").pipe(
      Flag.withDescription("Write the report without a model even when UGENT_MODEL is set"),
      Flag.withDefault(false)
    ),
    maxCalls: Flag.Int("max-calls").pipe(
      Flag.withDescription("With a model: the most tool calls it may make (default 10)"),
      Flag.withDefault(10)
    )
  },
  (flags) =>
    Effect.gen(function* () {
      if (flags.maxCalls < 0) {
        return yield* new UsageError({ problem: `--max-calls ${flags.maxCalls} is negative: give 0 or more.` })
      }
      const setup = yield* setupOf(flags, { stores: "sqlite", proofKey: false, profile: "local" })
      const mode = reportMode({ deterministic: flags.deterministic })
      const made =
        mode.mode === "deterministic"
          ? yield* onRoad(
              // The deterministic pipeline's results go to no model: its road's result budget is the report's own.
              { ...setup, budgetTokens: setup.budgetTokens ?? Report.budgetTokens },
              withProgress("gathering the report", Report.make({ root: setup.root }))
            )
          : yield* Effect.gen(function* () {
              const author = Report.withModel({
                model: mode.model,
                maxCalls: flags.maxCalls,
                onStep: flags.json ? undefined : printStep
              })
              const ran = yield* onRoadWithModel(setup, Report.make({ root: setup.root, author }))
              if (ran._tag === "ModelFailed") {
                return yield* new ModelNotReady({ problem: `the model failed: ${ran.error.message}` })
              }
              return ran.value
            })
      const saved = yield* Report.save(setup.root, made).pipe(
        Effect.mapError((e) => new UsageError({ problem: e.message }))
      )
      if (flags.json) return yield* printJson({ ok: true, report: made, saved })
      yield* Console.log(Report.body(made))
      if (made.incomplete !== undefined) yield* Console.error(`ugent: the report is incomplete: ${made.incomplete}`)
      yield* Console.error(`ugent: report saved to ${saved.markdown} and ${saved.json}`)
    }).pipe(
      Effect.catchTag("UsageError", usage(flags.json)),
      Effect.catchTag("ModelNotReady", modelNotReady(flags.json))
    )
).pipe(
  Command.withDescription(
    "A status report of the project (Project Resurrection): last active area, current state, suggested next steps, and what it is based on; written by the model UGENT_MODEL names, else by a deterministic pipeline; saved under .ugent/reports/"
  ),
  Command.withExamples([
    { command: "ugent report", description: "Report on the current directory" },
    { command: "ugent report --root ../old-project --json", description: "As JSON, for another folder" },
    {
      command: "UGENT_MODEL=openai:gpt-4.1-mini ugent report --max-calls 8",
      description: "Written by a model following the protocol, within 8 tool calls"
    }
  ])
)

/**
 * The `ugent` command.
 *
 * @category commands
 * @since 0.1.0
 */
export const command = Command.make("ugent").pipe(
  Command.withDescription(
    "Every tool on a path (world.tools.file.read), through one road: policy, trust, rate limits, audit, events"
  ),
  Command.withSubcommands([list, describe, invoke, exec, agent, report, serve, mcp, stats, approve])
)

/** Invalid invocations go to stderr, so stdout keeps only results. */
const presenter = CliOutput.layerPresenter({
  present: (event) =>
    event._tag === "InvalidInvocation"
      ? Effect.gen(function* () {
          const formatter = yield* CliOutput.Formatter
          yield* Console.error(formatter.formatErrors(event.errors))
        })
      : CliOutput.defaultPresenter.present(event)
})

/**
 * Runs `ugent` with arguments. It fails with `UsageError` (exit code 2) or
 * `CallFailed` (exit code 1), already printed.
 *
 * **Example** (Listing under a recipe; a usage error)
 * ```ts
 * import { NodeServices } from "@effect/platform-node"
 * import { Cli } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "recipe.json"), JSON.stringify({ allow: ["world.tools.file.list"] }))
 * const ugent = (...args: Array<string>) => Cli.run([...args, "--root", root]).pipe(Effect.provide(NodeServices.layer))
 * await Effect.runPromise(ugent("list", "--recipe", join(root, "recipe.json")))
 * // => world.tools.file.list  L0  List one directory level of the workspace: directories first, then files, with size and modification time.
 * const error = await Effect.runPromise(Effect.flip(ugent("list", "--trust", "L1", "--recipe", join(root, "missing.json"))))
 * console.log(error._tag)
 * // => UsageError
 * ```
 *
 * @category running
 * @since 0.1.0
 */
export const run = (
  argv: ReadonlyArray<string>
): Effect.Effect<void, UsageError | CallFailed | ModelNotReady, Command.Environment> =>
  Command.runWith(command, { version })(argv).pipe(
    Effect.catchIf(CliError.isCliError, (error) => {
      const problem =
        error._tag === "ShowHelp"
          ? error.errors.map((e) => e.message).join(" ") || "A command is needed."
          : error.message
      const usageError = new UsageError({ problem })
      return argv.includes("--json")
        ? Effect.andThen(
            printJson({ ok: false, error: { _tag: "UsageError", message: usageError.message }, kind: "usage" }),
            Effect.fail(usageError)
          )
        : Effect.fail(usageError)
    }),
    Effect.provide(presenter),
    // Logs go to stderr: stdout carries results and MCP messages only.
    Effect.provideService(Logger.LogToStderr, true)
  )

/**
 * The `ugent` binary: runs the process arguments and exits with the code of
 * the outcome. Bugs are printed on stderr and exit with 1.
 *
 * @category running
 * @since 0.1.0
 */
export const main = (argv: ReadonlyArray<string> = process.argv.slice(2)): void => {
  // A server stopped by a signal, or an MCP client closing stdin, ends normally.
  const isServer = argv[0] === "serve" || argv[0] === "mcp"
  NodeRuntime.runMain(
    run(argv).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) || Cause.findErrorOption(cause)._tag === "Some"
          ? Effect.failCause(cause)
          : Effect.andThen(
              Console.error(`ugent: internal error (a bug):\n${Cause.pretty(cause)}`),
              Effect.failCause(cause)
            )
      ),
      Effect.provide(NodeServices.layer)
    ),
    {
      disableErrorReporting: true,
      teardown: (exit, onExit) =>
        isServer && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)
          ? onExit(0)
          : Runtime.defaultTeardown(exit, onExit)
    }
  )
}
