/**
 * A `Server` is the whole AGENTESE road assembled from configuration: the
 * workspace, the registry of built-in nodes, the stores (memory, SQLite under
 * `<root>/.ugent/`, or PostgreSQL), the rate limiter and circuit breakers
 * (in memory, or in Redis to share them across machines), the event hub, and
 * the caller: an `Observer` with its trust level and `Recipe`, fixed by the
 * server's configuration (never by a request). Every projection (CLI, HTTP,
 * MCP, Toolkit) runs on this one layer.
 *
 * @since 0.1.0
 */
import { Observer, ReadProof, Trust } from "@ugent/core"
import { GitBackend, Workspace } from "@ugent/tools"
import { type Limit, type MemoryStore, RateLimited, Stores } from "@ugent/wrappers"
import { type Duration, Effect, Layer } from "effect"
import { CircuitBreaker as Breaker, RateLimiter } from "effect/persistence"
import * as Events from "./Events.ts"
import * as Invoke from "./Invoke.ts"
import * as Nodes from "./Nodes.ts"
import * as Recipe from "./Recipe.ts"
import * as Registry from "./Registry.ts"

/**
 * How a server is configured.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The workspace root (it must exist). */
  readonly root: string
  /** The caller's trust level (default L0). */
  readonly trust?: Trust.TrustLevel | undefined
  /** The caller's id (default `"local"`). */
  readonly observerId?: string | undefined
  readonly session?: string | undefined
  /** The caller's recipe (default: every path allowed, still subject to trust). */
  readonly recipe?: Recipe.Recipe | undefined
  /** Where traces and audit records go (default `"sqlite"`: `<root>/.ugent/ugent.db`). */
  readonly stores?: "memory" | "sqlite" | { readonly pg: string } | undefined
  /** A Redis URL to share rate limits and circuit breakers across processes. */
  readonly redis?: string | undefined
  /** Each call's time limit (default 120 s). */
  readonly timeout?: Duration.Input | undefined
  /** Who confirms calls that need it (default: nobody, so they are denied). */
  readonly approver?: ((request: Trust.ApprovalRequest) => Effect.Effect<boolean>) | undefined
  /** The workspace's writable globs for L1 callers (default: the workspace policy's). */
  readonly writable?: ReadonlyArray<string> | undefined
  /**
   * The key that signs read proofs (at least 32 bytes). Processes sharing it
   * accept each other's proofs; by default each process has its own.
   */
  readonly proofKey?: string | Uint8Array | undefined
  /** The global rate limits, over every caller and path (default 100/min and 2,000/h). */
  readonly globalLimits?: ReadonlyArray<Limit> | undefined
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

const storesLayer = (options: Options) => {
  const stores = options.stores ?? "sqlite"
  if (stores === "memory") return Stores.layerMemory()
  if (stores === "sqlite") return Stores.layerSqlite({ workspace: options.root })
  return Stores.layerPg({ url: stores.pg })
}

const limiterLayers = (options: Options) =>
  options.redis === undefined
    ? Layer.mergeAll(RateLimited.layerMemory, Breaker.layerStoreMemory())
    : Layer.mergeAll(
        RateLimiter.layer.pipe(Layer.provide(Stores.layerRateLimiterRedis({ url: options.redis }))),
        Stores.layerCircuitBreakerRedis({ url: options.redis })
      )

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
  const workspace = Workspace.layer({
    root: options.root,
    ...(options.writable !== undefined ? { policy: { writable: options.writable } } : {})
  })
  // One stores layer, shared by the road (traces, audit) and the self.memory node (working memory).
  const stores = storesLayer(options)
  const registry = Registry.layer<Workspace.Workspace | GitBackend.GitBackend | MemoryStore.MemoryStore>([
    Nodes.worldTools,
    Nodes.selfMemory
  ]).pipe(Layer.provide(Layer.mergeAll(workspace, GitBackend.layer, stores)))
  const road = Invoke.layer({ timeout: options.timeout, globalLimits: options.globalLimits }).pipe(
    Layer.provide(limiterLayers(options)),
    Layer.provideMerge(Layer.mergeAll(registry, Events.layer, stores))
  )
  const caller = Layer.mergeAll(
    Observer.layer({ id: options.observerId ?? "local", trust: options.trust ?? 0, session: options.session }),
    Recipe.layer(options.recipe ?? Recipe.allowAll),
    options.approver !== undefined ? Trust.approverLayer(options.approver) : Layer.empty,
    options.proofKey !== undefined ? ReadProof.layerKey(options.proofKey) : Layer.empty
  )
  return Layer.mergeAll(road, caller)
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
