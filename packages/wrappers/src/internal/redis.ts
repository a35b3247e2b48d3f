// The Redis connection of the shared rate limiter and circuit breaker stores,
// made to fail fast. A command waits at most `commandTimeout` for an answer;
// none waits for a reconnection (node-redis's offline queue is off); once a
// command or the socket fails, Redis counts as down and every command fails at
// once, without touching the socket, until a ping in the background (one a
// second) is answered. An outage is logged once when it starts and once when
// it ends. The layer starts whether Redis answers or not: a server comes up
// while Redis is down and follows its on-store-error policy until it is back.
// Written here rather than taken from @effect/platform-node's NodeRedis, whose
// connection waits for Redis at start-up, queues commands while reconnecting
// (each then waited node-redis's 5 s command timeout: ~25 s per limited call)
// and logs every socket error with its stack.
import { Duration, Effect, Exit, Latch, Layer } from "effect"
import { constVoid } from "effect/Function"
import { Redis } from "effect/persistence"
import { importOptional } from "./optional.ts"

export interface Options {
  readonly url: string
  /** How long a connection attempt may take (default 1 s). */
  readonly connectTimeout?: Duration.Input | undefined
  /** How long a command may wait for its answer (default 1 s). */
  readonly commandTimeout?: Duration.Input | undefined
}

const probeInterval = Duration.seconds(1)

/** Where Redis is, for the log: host and port, never the credentials of the URL. */
const whereOf = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port === "" ? "6379" : parsed.port}`
  } catch {
    return "the configured address"
  }
}

/** A failure in one line, for the log. */
const reasonOf = (cause: unknown): string => {
  const text = cause instanceof Error ? cause.message || cause.name : String(cause)
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}

const millisOf = (input: Duration.Input | undefined, fallback: number): number =>
  input === undefined ? fallback : Math.max(1, Duration.toMillis(Duration.fromInputUnsafe(input)))

export const make = (options: Options) =>
  Effect.gen(function* () {
    const connectMillis = millisOf(options.connectTimeout, 1000)
    const commandMillis = millisOf(options.commandTimeout, 1000)
    const { createClient, ErrorReply } = yield* importOptional(
      "redis",
      "Redis (shared rate limits and circuit breakers)",
      () => import("redis")
    ).pipe(Effect.mapError((cause) => new Redis.RedisError({ cause })))
    const where = whereOf(options.url)
    // Synchronous: the line is written when the outage is noticed, even by an event of the socket.
    const log = Effect.runSyncWith(yield* Effect.context<never>())

    // Down since when, and how many commands were refused meanwhile; undefined while Redis answers.
    let down: { readonly since: number; failed: number } | undefined
    const probing = yield* Latch.make(false)
    const markDown = (cause: unknown) => {
      if (down !== undefined) return
      down = { since: Date.now(), failed: 0 }
      log(
        Effect.logWarning(
          `Redis at ${where} does not answer (${reasonOf(cause)}): shared rate limits and circuit breakers cannot be checked until it does, and calls follow the on-store-error policy meanwhile`
        )
      )
      // After the line: opening wakes the fibers waiting on it, which may run before this returns.
      probing.openUnsafe()
    }
    const markUp = () => {
      if (down === undefined) return
      const { since, failed } = down
      down = undefined
      probing.closeUnsafe()
      const seconds = ((Date.now() - since) / 1000).toFixed(1)
      log(
        Effect.logInfo(
          `Redis at ${where} answers again after ${seconds} s; ${failed} limiter and breaker checks failed meanwhile`
        )
      )
    }

    const client = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          createClient({
            url: options.url,
            // Commands fail at once while the connection is down, instead of queueing for a reconnection.
            disableOfflineQueue: true,
            commandOptions: { timeout: commandMillis },
            socket: {
              connectTimeout: connectMillis,
              // Reconnect for ever (also when the first attempt fails), at most 2 s apart.
              reconnectStrategy: (retries: number) =>
                Math.min(50 * 2 ** retries, 2000) + Math.floor(Math.random() * 200)
            }
          }),
        catch: (cause) => new Redis.RedisError({ cause })
      }),
      (client) =>
        Effect.sync(() => {
          try {
            client.destroy()
          } catch {
            // Already closed.
          }
        })
    )
    // Every socket error would otherwise be thrown (no listener) or logged; one outage is one line.
    client.on("error", markDown)
    client.on("ready", markUp)

    // node-redis's own timeout drops the command from its queue; the abort signal does when the call is interrupted.
    const command = <A>(args: ReadonlyArray<string>): Effect.Effect<A, Redis.RedisError> =>
      Effect.tryPromise({
        try: (signal) => client.sendCommand([...args], { abortSignal: signal }) as Promise<A>,
        catch: (cause) => new Redis.RedisError({ cause })
      }).pipe(
        Effect.timeoutOrElse({
          duration: commandMillis + 50,
          orElse: () => Effect.fail(new Redis.RedisError({ cause: new Error(`no answer within ${commandMillis} ms`) }))
        })
      )

    const unreachable = new Redis.RedisError({ cause: new Error(`Redis at ${where} does not answer`) })
    const send = <A = unknown>(name: string, ...args: ReadonlyArray<string>): Effect.Effect<A, Redis.RedisError> =>
      Effect.suspend(() => {
        if (down !== undefined) {
          down.failed++
          return Effect.fail(unreachable)
        }
        return command<A>([name, ...args]).pipe(
          // An error Redis answered with is not an outage; anything else (no answer, no socket) is.
          Effect.tapError((e) => Effect.sync(() => (e.cause instanceof ErrorReply ? undefined : markDown(e.cause))))
        )
      })

    // While down, one ping a second; its answer ends the outage.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* probing.await
          yield* Effect.sleep(probeInterval)
          if (down === undefined) return
          if (Exit.isSuccess(yield* Effect.exit(command(["PING"])))) markUp()
        })
      )
    )

    // Connect in the background; wait until it is up or known down, at most the connect timeout.
    const connecting = client.connect()
    connecting.catch(() => {})
    yield* Effect.raceFirst(
      Effect.promise(() => connecting.then(constVoid, constVoid)),
      probing.await
    ).pipe(
      Effect.timeoutOption(connectMillis),
      Effect.andThen(
        Effect.sync(() => (client.isReady ? undefined : markDown(new Error(`no answer within ${connectMillis} ms`))))
      )
    )

    const unsupported = (what: string) =>
      new Redis.RedisError({ cause: new Error(`${what} is not offered by the limiter's Redis connection`) })
    return yield* Redis.make({
      send,
      // The limiter and breaker stores only send commands and scripts.
      connect: Effect.fail(unsupported("A reserved connection")),
      subscribe: () => Effect.fail(unsupported("Subscribing"))
    })
  })

/** The `Redis` service over a fail-fast connection (see the module's comment). */
export const layer = (options: Options): Layer.Layer<Redis.Redis, Redis.RedisError> =>
  Layer.effect(Redis.Redis, make(options))
