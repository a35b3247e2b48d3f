/**
 * A time-limited cache of the web tools in the host's `KeyValueStore`
 * (memory, SQLite, PostgreSQL): values are stored as JSON through their
 * schema with their expiry time, under `ugent/<namespace>/<sha-256 of the
 * key>`, so keys stay short whatever the URL or query. Time is the Effect
 * `Clock`, so tests move it with `TestClock`. The cache is an optimization:
 * a store that fails is logged and treated as a miss, never as a failed
 * call. Entries this process wrote are removed once expired (swept every 64
 * writes), so an in-memory store does not grow without end.
 *
 * @internal
 */
import { createHash } from "node:crypto"
import { Clock, Effect, Option, Schema } from "effect"
import { KeyValueStore } from "effect/persistence"

/** A cache of `A` values. */
export interface TtlCache<A> {
  readonly get: (key: ReadonlyArray<string>) => Effect.Effect<Option.Option<A>>
  readonly set: (key: ReadonlyArray<string>, value: A) => Effect.Effect<void>
}

const sweepEvery = 64

/** A cache of `schema` values living `ttlMillis` in `store`. */
export const make = <A>(
  store: KeyValueStore.KeyValueStore,
  namespace: string,
  schema: Schema.Codec<A, unknown, never, never>,
  ttlMillis: number
): TtlCache<A> => {
  const scoped = KeyValueStore.prefix(store, `ugent/${namespace}/`)
  const json = Schema.fromJsonString(Schema.toCodecJson(schema))
  const encode = Schema.encodeEffect(json)
  const decode = Schema.decodeUnknownEffect(json)
  const written = new Map<string, number>()
  let writes = 0

  const digest = (key: ReadonlyArray<string>): string => createHash("sha256").update(JSON.stringify(key)).digest("hex")

  const remove = (id: string) =>
    Effect.andThen(
      scoped.remove(id),
      Effect.sync(() => written.delete(id))
    )

  const sweep = (now: number) =>
    Effect.forEach(
      [...written].filter(([, expires]) => expires <= now),
      ([id]) => remove(id),
      { discard: true }
    )

  const tolerate =
    (operation: string) =>
    <B>(effect: Effect.Effect<B, unknown>, fallback: B): Effect.Effect<B> =>
      Effect.catchCause(effect, (cause) =>
        Effect.as(Effect.logWarning(`web cache: ${operation} failed; going on without the cache`, cause), fallback)
      )

  return {
    get: (key) =>
      tolerate("read")(
        Effect.gen(function* () {
          const id = digest(key)
          // Stored as `<expiry in ms>\n<JSON>`, so an expired entry is dropped without decoding it.
          const stored = yield* scoped.get(id)
          if (stored === undefined) return Option.none<A>()
          const newline = stored.indexOf("\n")
          const now = yield* Clock.currentTimeMillis
          if (newline < 0 || !(Number(stored.slice(0, newline)) > now)) {
            yield* remove(id)
            return Option.none<A>()
          }
          return Option.some(yield* decode(stored.slice(newline + 1)))
        }),
        Option.none<A>()
      ),
    set: (key, value) =>
      tolerate("write")(
        Effect.gen(function* () {
          const id = digest(key)
          const now = yield* Clock.currentTimeMillis
          const expires = now + ttlMillis
          yield* scoped.set(id, `${expires}\n${yield* encode(value)}`)
          written.set(id, expires)
          writes += 1
          if (writes % sweepEvery === 0) yield* sweep(now)
        }),
        undefined
      )
  }
}
