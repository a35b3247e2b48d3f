/**
 * A `Server` is the whole AGENTESE road assembled from options: the
 * workspace, the families of tools it serves (the built-in ones by default;
 * each family is one folder and one line in the list), the stores (memory,
 * SQLite under `<root>/.ugent/`, or PostgreSQL), the rate limiter and circuit
 * breakers (in memory, or in Redis to share them across machines), the loop
 * detector, the sessions, the event hub, and the caller: an `Observer` with
 * its trust level and `Recipe`, fixed by the server's options (never by a
 * request). The profile (`local`, `team` or `shared`), the recipe and the options
 * set the limits. Every projection (CLI, HTTP, MCP, Toolkit, an agent loop)
 * runs on this one layer.
 *
 * @since 0.1.0
 */
import { type Family, Observer, ReadProof, Trust } from "@ugent/core"
import { type Checkpoints, type Sandbox, Workspace } from "@ugent/tools"
import {
  type AuditStore,
  type CircuitBreakerOptions,
  type Limit,
  OnStoreError,
  type OnStoreErrorPolicy,
  RateLimited,
  Stores,
  type TraceStore
} from "@ugent/wrappers"
import { Duration, Effect, Layer } from "effect"
import type { LanguageModel } from "effect/ai"
import { CircuitBreaker as Breaker, RateLimiter, type Redis } from "effect/persistence"
import * as Events from "./Events.ts"
import * as Families from "./Families.ts"
import * as Human from "./Human.ts"
import * as Invoke from "./Invoke.ts"
import * as Loop from "./Loop.ts"
import * as Mounts from "./Mounts.ts"
import type * as Profile from "./Profile.ts"
import * as Recipe from "./Recipe.ts"
import * as Modes from "./self/Modes.ts"
import * as Registry from "./Registry.ts"
import * as SessionState from "./SessionState.ts"
import * as State from "./State.ts"

/**
 * What a server provides to the families it serves: the workspace, the
 * stores (a key-value store among them) and the sessions' modes. A family
 * that needs more brings it in its own layer.
 *
 * @category models
 * @since 0.2.0
 */
export type HostServices = Workspace.Workspace | Stores.Stores | Modes.Modes

/**
 * How a server is configured.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The workspace root (it must exist). */
  readonly root: string
  /** The families served (default {@link Families.standard}, configured from the recipe). */
  readonly families?: ReadonlyArray<Family.Family<HostServices, unknown>> | undefined
  /**
   * Families served after `families` (or the standard ones): families from
   * outside the packages, such as the modules of `ugent --family` and of a
   * recipe's `families`, loaded with `Families.load`. A path or a name
   * taken twice stops the server at start (`Registry.FamilyConflict`).
   */
  readonly extraFamilies?: ReadonlyArray<Family.Family<HostServices, unknown>> | undefined
  /**
   * MCP servers whose tools are served at `world.mcp.<name>.<tool>`, after
   * every family, through the same road (see `Mounts`). Default: the
   * recipe's `mounts` (working directories as given, or the current one).
   * A server that does not start stops this one at start (`Mounts.MountError`).
   */
  readonly mounts?: ReadonlyArray<Mounts.Mount> | undefined
  /** How mounted servers are served: the largest answer read, how long one may take to start. */
  readonly mountOptions?: Mounts.Options | undefined
  /**
   * A model for the tools that call one (`world.tools.model.summarize`,
   * `world.tools.model.extract`): a `LanguageModel` layer such as
   * `Model.fromEnv()` or a provider's. Without it those tools are not offered.
   */
  readonly model?: Layer.Layer<LanguageModel.LanguageModel> | undefined
  /** The caller's trust level (default L0). */
  readonly trust?: Trust.TrustLevel | undefined
  /** The caller's id (default `"local"`). */
  readonly observerId?: string | undefined
  readonly session?: string | undefined
  /** The caller's recipe (default: every path allowed, still subject to trust). */
  readonly recipe?: Recipe.Recipe | undefined
  /** The profile, over the recipe's (default: the recipe's, else `fallbackProfile`). */
  readonly profile?: Profile.Profile | undefined
  /** The profile when neither the options nor the recipe name one (default `local`). */
  readonly fallbackProfile?: Profile.Profile | undefined
  /** Limits over the profile's and the recipe's: global, per caller, per caller and path pattern. */
  readonly limits?:
    | {
        readonly global?: ReadonlyArray<Limit> | undefined
        readonly caller?: ReadonlyArray<Limit> | undefined
        readonly tool?: ReadonlyArray<readonly [pattern: string, limits: ReadonlyArray<Limit>]> | undefined
      }
    | undefined
  /** The global rate limits (the same as `limits.global`). */
  readonly globalLimits?: ReadonlyArray<Limit> | undefined
  /** Each call's time limit (default 120 s). */
  readonly timeout?: Duration.Input | undefined
  /** The loop detector (default: 3 identical results in a minute), or `false`. */
  readonly loop?: Profile.LoopSettings | false | undefined
  /** The result budget in estimated tokens (default 25,000). */
  readonly budgetTokens?: number | undefined
  /** Where traces and audit records go (default `"sqlite"`: `<root>/.ugent/ugent.db`). */
  readonly stores?: "memory" | "sqlite" | { readonly pg: string } | undefined
  /**
   * What traces keep: payloads cut to a head with their size and hash
   * (default) or whole, and how long records are kept (default 7 days and
   * 200 MB). See `TraceStore.TraceOptions`.
   */
  readonly traces?: TraceStore.TraceOptions | undefined
  /**
   * How audit entries are written: behind (default: within about 50 ms, lost
   * if the process is killed meanwhile) or, with `sync`, before each call is
   * answered. See `AuditStore.AuditOptions`.
   */
  readonly audit?: AuditStore.AuditOptions | undefined
  /** A Redis URL to share rate limits and circuit breakers across processes. */
  readonly redis?: string | undefined
  /**
   * A room of several servers: its name, under which the session state
   * (remembered proofs, plan mode, MCP sessions) is kept in Redis (`redis`
   * is required), so any instance serves any request of any session. Every
   * instance of a room must have the same proof key, recipe and limits;
   * one that differs does not start (`SessionState.RoomMismatch`).
   */
  readonly room?: string | undefined
  /** This instance's name in its records (default `<host>-<pid>`). */
  readonly instance?: string | undefined
  /**
   * When the rate limiter's or breaker's store (Redis) does not answer: run
   * calls uncounted (`"allow"`, default) or refuse them with a typed
   * `unavailable` error (`"fail"`). Either way a call answers within about a
   * second.
   */
  readonly onStoreError?: OnStoreErrorPolicy | undefined
  /**
   * The circuit breaker of each path (default under the `shared` profile:
   * the CircuitBreaker wrapper's, 5 consecutive failures open it for 30 s;
   * under `local`, none unless this is given).
   */
  readonly breaker?: Omit<CircuitBreakerOptions, "key"> | undefined
  /** Who confirms calls that need it (default: nobody, so they are denied). */
  readonly approver?: ((request: Trust.ApprovalRequest) => Effect.Effect<boolean>) | undefined
  /** How long an approval may wait before it counts as a denial (default 30 s). */
  readonly approvalTimeout?: Duration.Input | undefined
  /** Whether shell commands may use the network (default: the recipe's `shellNetwork`, else no). */
  readonly shellNetwork?: boolean | undefined
  /**
   * The operator's consent to serve the shell without a sandbox where none
   * can be made: exactly `Sandbox.unsandboxedConsent`, and only for an L3
   * caller (otherwise the server does not start).
   */
  readonly unsandboxed?: typeof Sandbox.unsandboxedConsent | undefined
  /**
   * The host user shell commands run as when the server runs as root
   * (default: the workspace's owner; a root-owned workspace gets no shell,
   * since its sandbox would be host root).
   */
  readonly sandboxUser?: Sandbox.Options["user"]
  /** The workspace's writable globs for L1 callers (default: the workspace policy's). */
  readonly writable?: ReadonlyArray<string> | undefined
  /**
   * The checkpoints of the workspace's writes, under `<root>/.ugent/checkpoints/`
   * (default: on, with `Checkpoints.defaults`), or `false` for none (then
   * `self.tools.checkpoint.*` is not offered).
   */
  readonly checkpoints?: Checkpoints.Options | false | undefined
  /**
   * The key that signs read proofs (at least 32 bytes), or `"workspace"`:
   * the workspace's own key (`UGENT_PROOF_KEY`, else `.ugent/proof.key`,
   * shared by every process on the workspace). By default each process has
   * its own.
   */
  readonly proofKey?: string | Uint8Array | "workspace" | undefined
  /**
   * How long a read proof is accepted after it was issued (default 24 hours,
   * `Workspace.defaultProofMaxAge`), or `false` for no bound; an older one is
   * refused (`ProofRejected`, `expired`), with a message to read again.
   */
  readonly proofMaxAge?: Duration.Input | false | undefined
}

/**
 * What a server provides: the road and the caller it serves.
 *
 * @category models
 * @since 0.1.0
 */
export type Services =
  | Invoke.Invoker
  | Observer.Observer
  | Recipe.CurrentRecipe
  | Events.Events
  | Registry.Registry
  | Stores.Stores
  | Human.Pending
  | SessionState.Services

const storesLayer = (options: Options) => {
  const stores = options.stores ?? "sqlite"
  const { traces, audit } = options
  if (stores === "memory") return Stores.layerMemory({ traces })
  if (stores === "sqlite") {
    return Layer.unwrap(
      Effect.map(State.database(options.root), (filename) => Stores.layerSqlite({ filename, traces, audit }))
    )
  }
  return Stores.layerPg({ url: stores.pg, traces, audit })
}

/**
 * Both stores on one Redis connection (one outage, one log line), the limiter over its store; a room's
 * limits and breakers are its own (`ugent:room:<name>:`), so rooms on one Redis do not count each other's calls.
 */
const redisLayers = (connection: Layer.Layer<Redis.Redis, Redis.RedisError>, room: string | undefined) => {
  const redis = Stores.layerRedisOn({ prefix: room === undefined ? undefined : `ugent:room:${room}:` }).pipe(
    Layer.provide(connection)
  )
  return Layer.mergeAll(RateLimiter.layer.pipe(Layer.provide(redis)), redis)
}

const limiterLayers = (options: Options, connection: Layer.Layer<Redis.Redis, Redis.RedisError> | undefined) =>
  Layer.merge(
    connection === undefined
      ? Layer.mergeAll(RateLimited.layerMemory, Breaker.layerStoreMemory())
      : redisLayers(connection, options.room),
    // Read by every path's RateLimited and CircuitBreaker at call time.
    Layer.succeed(OnStoreError, options.onStoreError ?? "allow")
  )

/**
 * What every instance of a room must share besides the proof key, as
 * fingerprints: the workspace's path, the recipe, the profile and limits,
 * the caller's trust.
 *
 * @category options
 * @since 0.2.0
 */
export const agreementOf = (options: Options): SessionState.Agreement => ({
  // A proof names its workspace by the root's path: instances on other paths could not verify each other's.
  workspace: SessionState.fingerprint(options.root),
  recipe: SessionState.fingerprint(options.recipe ?? null),
  limits: SessionState.fingerprint({
    profile: options.profile ?? null,
    fallback: options.fallbackProfile ?? null,
    limits: options.limits ?? null,
    global: options.globalLimits ?? null,
    timeout: options.timeout === undefined ? null : Duration.toMillis(Duration.fromInputUnsafe(options.timeout)),
    budget: options.budgetTokens ?? null
  }),
  trust: String(options.trust ?? 0)
})

/** The session state: in memory, or a room's in Redis over the one connection. */
const sessionStateLayer = (options: Options, connection: Layer.Layer<Redis.Redis, Redis.RedisError> | undefined) => {
  if (options.room === undefined) return SessionState.layerMemory()
  if (connection === undefined)
    throw new Error("Server.layer: a room (room) keeps its sessions in Redis; give redis too.")
  return SessionState.layerRedis({
    room: options.room,
    onStoreError: options.onStoreError,
    agreement: agreementOf(options)
  }).pipe(Layer.provide(connection))
}

const keyLayer = (options: Options): Layer.Layer<never, State.StateError> => {
  if (options.proofKey === undefined) return Layer.empty
  if (options.proofKey === "workspace") return State.layer(options.root)
  return ReadProof.layerKey(options.proofKey)
}

/** The mounts a server serves: its options', else its recipe's; a list that is not well-formed stops it. */
const mountsOf = (options: Options): ReadonlyArray<Mounts.Mount> => {
  const mounts = options.mounts ?? Mounts.fromRecipe(options.recipe?.mounts, process.cwd())
  const problem = Mounts.isMountError(mounts) ? mounts : Mounts.checkAll(mounts)
  if (problem !== undefined) throw new Error(`Server.layer: ${problem.message}`)
  return mounts as ReadonlyArray<Mounts.Mount>
}

/**
 * The road's overrides from a server's options.
 *
 * @category options
 * @since 0.2.0
 */
export const overridesOf = (options: Options): Invoke.InvokerOptions => ({
  root: options.root,
  fallbackProfile: options.fallbackProfile,
  profile: options.profile,
  global: options.limits?.global ?? options.globalLimits,
  caller: options.limits?.caller,
  tool: options.limits?.tool,
  timeout: options.timeout,
  loop: options.loop,
  budgetTokens: options.budgetTokens,
  breaker: options.breaker
})

/**
 * The server layer.
 *
 * **Example** (Invoking in process)
 * ```ts
 * import { Invoke, Server } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "hello.txt"), "hello\n")
 * const outcome = await Effect.runPromise(
 *   Invoke.invoke({ path: "world.tools.file.read", input: { path: "hello.txt" } }).pipe(
 *     Effect.provide(Server.layer({ root, stores: "memory" }))
 *   )
 * )
 * console.log(outcome.ok && (outcome.result as { content: string }).content)
 * // => 1	hello
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options) => {
  // The recipe adds blocked names to the built-in ones (never removes them), for every tool and the shell's masks.
  const workspace = Workspace.layer({
    root: options.root,
    policy: { writable: options.writable, blocked: options.recipe?.blocked },
    proofMaxAge: options.proofMaxAge,
    ...(options.checkpoints === false ? {} : { checkpoints: options.checkpoints ?? {} })
  })
  // One stores layer, shared by the road (traces, audit) and the families (working memory).
  const stores = storesLayer(options)
  if (options.unsandboxed !== undefined && options.trust !== 3) {
    throw new Error("Server.layer: an unsandboxed shell is served only to an L3 caller (trust: 3).")
  }
  if ((options.recipe?.families?.length ?? 0) > 0 && options.extraFamilies === undefined) {
    // A recipe names modules relative to its own file, which only its loader knows.
    throw new Error(
      "Server.layer: the recipe names families; load them with Families.loadAll(recipe.families, { from: <the recipe's directory> }) and pass them as extraFamilies."
    )
  }
  const families: ReadonlyArray<Family.Family<HostServices, unknown>> = [
    ...(options.families ??
      Families.standard({
        allowHosts: options.recipe?.allowHosts,
        shell: options.recipe?.shell,
        shellNetwork: options.shellNetwork ?? options.recipe?.shellNetwork,
        unsandboxed: options.unsandboxed,
        sandboxUser: options.sandboxUser
      })),
    ...(options.extraFamilies ?? []),
    ...mountsOf(options).map((mount) => Mounts.family(mount, options.mountOptions))
  ]
  // One Redis connection for the limits, the breakers and a room's session state (one outage, one log line).
  const connection = options.redis === undefined ? undefined : Stores.layerRedisConnection({ url: options.redis })
  // One session state, read by the road (proofs, plan mode) and the MCP endpoint, and set by self.tools.mode.*.
  const sessionState = sessionStateLayer(options, connection)
  const registry = Registry.layer(families).pipe(
    Layer.provide(Layer.mergeAll(workspace, stores, sessionState, options.model ?? Layer.empty))
  )
  const road = Invoke.layer(overridesOf(options)).pipe(
    // The workspace (the same layer the families are built on) binds approvals to its files' bytes.
    Layer.provide(Layer.mergeAll(limiterLayers(options, connection), Loop.layerMemory, sessionState, workspace)),
    Layer.provideMerge(Layer.mergeAll(registry, Events.layer, stores))
  )
  const caller = Layer.mergeAll(
    Observer.layer({ id: options.observerId ?? "local", trust: options.trust ?? 0, session: options.session }),
    Recipe.layer(options.recipe ?? Recipe.allowAll),
    // A program's own approver, else the person behind the call's projection (see Human).
    options.approver !== undefined ? Trust.approverLayer(options.approver) : Human.approverLayer,
    options.approvalTimeout !== undefined
      ? Layer.succeed(Trust.ApprovalTimeout, Duration.fromInputUnsafe(options.approvalTimeout))
      : Layer.empty,
    Human.layerPending
  )
  const instance = options.instance === undefined ? Layer.empty : Layer.succeed(SessionState.Instance, options.instance)
  return Layer.mergeAll(road, caller, sessionState).pipe(Layer.provideMerge(Layer.merge(keyLayer(options), instance)))
}

/**
 * Runs an effect that needs a server, building the server from options.
 *
 * @category running
 * @since 0.1.0
 */
export const provide =
  (options: Options) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.provide(effect, layer(options))
