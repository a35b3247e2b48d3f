/**
 * The session state of a room in Redis: two instances (two layers, two
 * connections) see each other's proofs, modes and MCP sessions; the room's
 * agreement refuses an instance with another proof key; a Redis that stops
 * answering fails closed where asked. Without UGENT_REDIS_URL the suite
 * skips and says so, except under CI.
 */
import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Invoke, Modes, Server, Sessions, SessionState } from "@ugent/agentese"
import { ReadProof } from "@ugent/core"
import { Stores } from "@ugent/wrappers"
import { Context, Effect, Exit, Layer } from "effect"
import { Redis } from "effect/persistence"

const url = process.env.UGENT_REDIS_URL
const ci = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false"
const skip = url === undefined && !ci
if (skip) console.warn("session state tests: skipped: UGENT_REDIS_URL is not set (run .ci/services.sh)")
const skipped = skip ? " (skipped: UGENT_REDIS_URL is not set)" : ""

const freshRoom = () => `test-${process.pid}-${randomBytes(4).toString("hex")}`

/** The Redis connection, and a switch that makes every command fail as an unreachable Redis does. */
const switchable = () => {
  const state = { down: false }
  const layer = Layer.effect(
    Redis.Redis,
    Effect.map(Redis.Redis, (redis) =>
      Redis.Redis.of({
        ...redis,
        send: (command, ...args) =>
          state.down
            ? Effect.fail(new Redis.RedisError({ cause: new Error("Redis at 127.0.0.1:6379 does not answer") }))
            : redis.send(command, ...args)
      })
    )
  ).pipe(Layer.provide(Stores.layerRedisConnection({ url: url! })))
  return { state, layer }
}

/** One instance of a room: its session state on a connection of its own, under a proof key. */
const instance = (
  room: string,
  key: Uint8Array,
  options: Partial<SessionState.RedisOptions> = {},
  connection: Layer.Layer<Redis.Redis, unknown> = Stores.layerRedisConnection({ url: url! })
) =>
  Layer.build(
    SessionState.layerRedis({ room, ...options }).pipe(
      Layer.provide(connection),
      Layer.provide(Layer.succeed(ReadProof.Key, key))
    )
  )

const proofOf = (key: Uint8Array, content: string, coverage: ReadProof.Coverage) =>
  ReadProof.issue({ path: "src/a.ts", content, coverage }).pipe(Effect.provideService(ReadProof.Key, key))

describe("SessionState in Redis", () => {
  it.effect.skipIf(skip)(`two instances share remembered proofs, plan mode and MCP sessions${skipped}`, () =>
    Effect.scoped(
      Effect.gen(function* () {
        const room = freshRoom()
        const key = randomBytes(32)
        const a = yield* instance(room, key)
        const b = yield* instance(room, key)
        const whole = yield* proofOf(key, "x\ny\n", { _tag: "Whole" })
        yield* Context.get(a, Sessions.Sessions).remember("s1", "src/a.ts", whole)
        assert.strictEqual(yield* Context.get(b, Sessions.Sessions).proofOf("s1", "src/a.ts"), whole.token)
        assert.isUndefined(yield* Context.get(b, Sessions.Sessions).proofOf("s2", "src/a.ts"))
        // A proof of part of the same content does not replace the whole file's.
        const part = yield* proofOf(key, "x\ny\n", { _tag: "Lines", start: 1, end: 1 })
        yield* Context.get(b, Sessions.Sessions).remember("s1", "src/a.ts", part)
        assert.strictEqual(yield* Context.get(a, Sessions.Sessions).proofOf("s1", "src/a.ts"), whole.token)
        yield* Context.get(b, Sessions.Sessions).end("s1")
        assert.isUndefined(yield* Context.get(a, Sessions.Sessions).proofOf("s1", "src/a.ts"))

        yield* Context.get(a, Modes.Modes).set("session:local:s1", "plan")
        assert.strictEqual(yield* Context.get(b, Modes.Modes).get("session:local:s1"), "plan")
        yield* Context.get(b, Modes.Modes).set("session:local:s1", "execute")
        assert.strictEqual(yield* Context.get(a, Modes.Modes).get("session:local:s1"), "execute")

        const mcpA = Context.get(a, SessionState.McpSessions)
        const mcpB = Context.get(b, SessionState.McpSessions)
        assert.isTrue(mcpA.shared)
        const settled = {
          client: "127.0.0.1",
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientName: "claude-code"
        }
        yield* mcpA.open("m1", settled, 60_000)
        assert.deepStrictEqual(yield* mcpB.find("m1", 60_000), settled)
        yield* mcpB.end("m1")
        assert.isUndefined(yield* mcpA.find("m1", 60_000))
      })
    )
  )

  it.effect.skipIf(skip)(
    `threat: an instance started with another proof key or recipe on a room is refused, the difference named${skipped}`,
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const room = freshRoom()
          const key = randomBytes(32)
          yield* instance(room, key, { agreement: { recipe: "r1" } })
          const other = yield* Effect.exit(instance(room, randomBytes(32), { agreement: { recipe: "r1" } }))
          assert.isTrue(Exit.isFailure(other))
          const message = Exit.isFailure(other) ? String(other.cause) : ""
          assert.match(message, /this instance's proof key differs from the room's/)
          const recipe = yield* Effect.exit(instance(room, key, { agreement: { recipe: "r2" } }))
          assert.match(Exit.isFailure(recipe) ? String(recipe.cause) : "", /recipe: room r1, this instance r2/)
          // The same key and recipe join.
          yield* instance(room, key, { agreement: { recipe: "r1" } })
        })
      )
  )

  it.effect.skipIf(skip)(
    `threat: a room's Redis that stops answering leaves no edit unproven, and plan mode fails closed when asked${skipped}`,
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const room = freshRoom()
          const key = randomBytes(32)
          const closed = switchable()
          const open = switchable()
          const strict = yield* instance(room, key, { onStoreError: "fail" }, closed.layer)
          const lenient = yield* instance(room, key, { onStoreError: "allow" }, open.layer)
          const whole = yield* proofOf(key, "x\n", { _tag: "Whole" })
          yield* Context.get(strict, Sessions.Sessions).remember("s1", "src/a.ts", whole)
          yield* Context.get(strict, Modes.Modes).set("k", "plan")
          closed.state.down = true
          open.state.down = true
          // No proof is found: the edit is refused as never read, never run without one.
          assert.isUndefined(yield* Context.get(strict, Sessions.Sessions).proofOf("s1", "src/a.ts"))
          const mode = yield* Effect.flip(Context.get(strict, Modes.Modes).get("k"))
          assert.strictEqual(mode._tag, "SessionStoreUnavailable")
          assert.match(mode.message, /The session store did not answer/)
          assert.strictEqual(yield* Context.get(lenient, Modes.Modes).get("k"), "execute")
          const find = yield* Effect.flip(Context.get(strict, SessionState.McpSessions).find("m1", 1000))
          assert.strictEqual(find._tag, "SessionStoreUnavailable")
        })
      )
  )

  it.skipIf(skip)(
    `threat: two rooms on one Redis do not count each other's calls; two instances of one room do${skipped}`,
    { timeout: 60_000 },
    async () => {
      const root = mkdtempSync(join(tmpdir(), "ugent-rooms-"))
      writeFileSync(join(root, "a.txt"), "a\n")
      const key = randomBytes(32)
      const [first, second] = [freshRoom(), freshRoom()]
      const list = (room: string) =>
        Effect.runPromise(
          Invoke.invoke({ path: "world.tools.file.list", input: {} }).pipe(
            Effect.provide(
              Server.layer({
                root,
                stores: "memory",
                redis: url!,
                room,
                proofKey: key,
                checkpoints: false,
                limits: { tool: [["world.tools.file.list", [{ limit: 1, window: "1 minute" }]]] }
              })
            )
          )
        )
      try {
        // Each room's one call a minute: the other room's call does not use it up.
        assert.isTrue((await list(first)).ok)
        assert.isTrue((await list(second)).ok)
        // A second instance of the first room counts against the same limit.
        const again = await list(first)
        assert.isFalse(again.ok)
        assert.strictEqual(again.ok ? "" : again.kind, "rate_limited")
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    }
  )

  it.effect("in memory, MCP sessions are the endpoint's own (not shared)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* Layer.build(SessionState.layerMemory())
        assert.isFalse(Context.get(context, SessionState.McpSessions).shared)
      })
    )
  )
})
