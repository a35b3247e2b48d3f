/**
 * The machinery of `Cached`: one Effect `Cache` per `Changes` hub (a hub
 * stands for one world that can change, so two workspaces with their own hubs
 * never share entries), an index of the files each entry depends on, and the
 * listener that drops entries a published change may have made stale.
 *
 * @internal
 */
import type { Changes } from "@ugent/core"
import { Cache, Duration, Effect, Equal, Exit, Hash, Option, type Schema, Scope } from "effect"
import { canonicalJson } from "./canonical.ts"
import { optionEncoder } from "./jsonValue.ts"
import { affects, inputRefs, outputRefs, type PathRefs } from "./pathRefs.ts"

/** A cache key: the canonical text decides equality; the decoded and encoded input ride along for the lookup. */
export class Key implements Equal.Equal {
  readonly id: string
  readonly input: unknown
  readonly encoded: unknown
  private hash: number | undefined
  constructor(id: string, input: unknown, encoded: unknown) {
    this.id = id
    this.input = input
    this.encoded = encoded
  }
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof Key && that.id === this.id
  }
  [Hash.symbol](): number {
    if (this.hash === undefined) this.hash = Hash.string(this.id)
    return this.hash
  }
}

interface Indexed {
  readonly key: Key
  refs: PathRefs
}

/** What a tool exposes to the store. */
export interface CachedTool {
  readonly name: string
  readonly version: string
  readonly input: Schema.Codec<unknown, unknown, never, never>
  readonly output: Schema.Codec<unknown, unknown, never, never>
  readonly readsFs: boolean
  readonly run: (a: unknown) => Effect.Effect<unknown, unknown, unknown>
}

export interface Options {
  readonly capacity: number
  readonly timeToLive: Duration.Duration
}

/** The cache of one tool under one hub. */
class HubCache {
  readonly cache: Cache.Cache<Key, unknown, unknown, unknown>
  readonly index = new Map<string, Indexed>()
  /** Changes published while lookups were running, for the output check of those lookups. */
  recent: Array<{ readonly epoch: number; readonly change: Changes.FileChange }> = []
  epoch = 0
  inflight = 0
  readonly capacity: number

  constructor(tool: CachedTool, options: Options) {
    this.capacity = options.capacity
    const readsFs = tool.readsFs
    const encodeOutput = optionEncoder(tool.output)
    const lookup = (key: Key): Effect.Effect<unknown, unknown, unknown> =>
      Effect.suspend(() => {
        const started = this.epoch
        // What the entry depends on is worked out on a miss only: a hit never pays for it.
        const fromInput = inputRefs(key.encoded, readsFs)
        const entry: Indexed = { key, refs: { ...fromInput, outputs: new Set() } }
        this.index.set(key.id, entry)
        this.inflight++
        return tool.run(key.input).pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              this.inflight--
              // A change may have dropped this entry already and a newer lookup replaced it: leave that one alone.
              const current = this.index.get(key.id) === entry
              if (Exit.isFailure(exit)) {
                if (current) this.index.delete(key.id)
              } else if (current) {
                const encoded = encodeOutput(exit.value)
                const out = Option.isSome(encoded)
                  ? outputRefs(encoded.value)
                  : { outputs: new Set<string>(), overflow: true }
                entry.refs = {
                  inputs: fromInput.inputs,
                  everything: fromInput.everything || out.overflow,
                  outputs: out.outputs
                }
                // A write that landed while this read ran may not be in its result: drop it.
                if (this.changedSince(started, entry.refs)) this.drop(key)
              }
              if (this.inflight === 0) this.recent = []
              this.prune()
            })
          )
        )
      })
    // Built outside any caller so that no caller's services are captured; each lookup runs with its caller's.
    this.cache = Effect.runSync(
      Cache.makeWith(lookup, {
        capacity: options.capacity,
        requireServicesAt: "lookup",
        // Failures are never kept: a zero time to live means "do not store".
        timeToLive: (exit) => (Exit.isSuccess(exit) ? options.timeToLive : Duration.zero)
      })
    )
  }

  private changedSince(epoch: number, refs: PathRefs): boolean {
    if (epoch === this.epoch) return false
    const oldest = this.recent[0]
    // The changes of that window were not all kept: assume the worst.
    if (oldest === undefined || oldest.epoch > epoch + 1) return true
    for (const { epoch: e, change } of this.recent) if (e > epoch && affects(refs, change)) return true
    return false
  }

  drop(key: Key): void {
    this.index.delete(key.id)
    Effect.runSync(Cache.invalidate(this.cache, key))
  }

  /** The listener registered on the hub: synchronous, so the next read after a write misses. */
  onChange(change: Changes.FileChange): void {
    this.epoch++
    if (this.inflight > 0) {
      this.recent.push({ epoch: this.epoch, change })
      if (this.recent.length > 1024) this.recent.shift()
    }
    for (const entry of [...this.index.values()]) if (affects(entry.refs, change)) this.drop(entry.key)
  }

  /** Forgets index entries the cache has evicted (LRU or expired), so the index stays bounded. */
  private prune(): void {
    if (this.index.size <= this.capacity * 2) return
    const live = new Set<string>()
    for (const key of Effect.runSync(Cache.keys(this.cache))) live.add(key.id)
    for (const id of [...this.index.keys()]) if (!live.has(id)) this.index.delete(id)
  }
}

/** The caches of one `Cached` tool, one per hub it has been called under. */
export class CachedStore {
  private readonly hubs = new WeakMap<Changes.ChangesShape, HubCache>()
  private readonly tool: CachedTool
  private readonly options: Options
  private readonly encodeInput: (u: unknown) => Option.Option<unknown>
  private readonly prefix: string

  constructor(tool: CachedTool, options: Options) {
    this.tool = tool
    this.options = options
    this.encodeInput = optionEncoder(tool.input)
    this.prefix = `${tool.name}@${tool.version}:`
  }

  private forHub(hub: Changes.ChangesShape): HubCache {
    let cache = this.hubs.get(hub)
    if (cache === undefined) {
      const created = new HubCache(this.tool, this.options)
      cache = created
      this.hubs.set(hub, created)
      // The listener holds the cache weakly, and its registration is never closed: it lives as long as
      // the hub, and a cached tool that is dropped does not live on in a long-lived hub.
      const ref = new WeakRef(created)
      Effect.runSync(
        Scope.provide(
          hub.listen((change) => ref.deref()?.onChange(change)),
          Scope.makeUnsafe()
        )
      )
    }
    return cache
  }

  /** Runs through the cache, or straight through when the input has no canonical encoding. */
  get(hub: Changes.ChangesShape, a: unknown): Effect.Effect<unknown, unknown, unknown> {
    const encoded = this.encodeInput(a)
    const text = Option.isSome(encoded) ? canonicalJson(encoded.value) : undefined
    if (text === undefined || Option.isNone(encoded)) return this.tool.run(a)
    const key = new Key(this.prefix + text, a, encoded.value)
    return Cache.get(this.forHub(hub).cache, key)
  }
}
