/**
 * The state of sessions, behind one layer: the read proofs a session was
 * shown (`Sessions`), plan mode (`Modes`) and the MCP streamable-HTTP
 * sessions (`McpSessions`). In memory (one process, the default), or in
 * Redis for a room of several servers, where any instance serves any
 * request of any session. Tasks and working memory live in the stores
 * (`--stores postgres://…` shares them); pending approvals are not here.
 *
 * Why Redis and not PostgreSQL: a remembered proof is written after every
 * read and looked up before every edit, and the session looked up on every
 * MCP request; on the 2-core test machine a Redis round trip took 0.135 ms
 * against 0.300 ms for a PostgreSQL upsert or select (load 4), 0.17 against
 * 3.2 ms at load 15 (`npm run bench -- room`), and Redis expires idle
 * sessions by itself.
 *
 * @since 0.2.0
 */
import { createHash, createHmac } from "node:crypto"
import { hostname } from "node:os"
import { ReadProof, type ToolError } from "@ugent/core"
import type { OnStoreErrorPolicy } from "@ugent/wrappers"
import { Context, Effect, Layer, Schedule, Schema } from "effect"
import { Redis } from "effect/persistence"
import * as Modes from "./self/Modes.ts"
import * as Sessions from "./Sessions.ts"

/**
 * What a server remembers of an MCP streamable-HTTP session, so that any
 * instance of a room can go on with it.
 *
 * @category models
 * @since 0.2.0
 */
export interface McpSession {
  /** Who opened it (its address), for the per-client bound. */
  readonly client: string
  /** The protocol revision settled at initialize. */
  readonly protocolVersion: string
  /** The client's capabilities, as it declared them. */
  readonly capabilities: Readonly<Record<string, unknown>>
  /** The client's name (`clientInfo.name`), which sets its result budget. */
  readonly clientName?: string | undefined
  /** The id of the caller whose credential opened it (a callers file): only that caller's credential resumes it. */
  readonly callerId?: string | undefined
}

/**
 * @category models
 * @since 0.2.0
 */
export interface McpSessionsShape {
  /** Whether other processes see these sessions (a room): then every request asks the store. */
  readonly shared: boolean
  readonly open: (
    id: string,
    session: McpSession,
    idleMillis: number
  ) => Effect.Effect<void, Sessions.SessionStoreUnavailable>
  /** The session, its idle time restarted; `undefined` when it ended or expired. */
  readonly find: (
    id: string,
    idleMillis: number
  ) => Effect.Effect<McpSession | undefined, Sessions.SessionStoreUnavailable>
  readonly end: (id: string) => Effect.Effect<void, Sessions.SessionStoreUnavailable>
}

/**
 * The MCP streamable-HTTP sessions.
 *
 * @category services
 * @since 0.2.0
 */
export class McpSessions extends Context.Service<McpSessions, McpSessionsShape>()(
  "ugent/agentese/SessionState/McpSessions"
) {}

/**
 * Everything this module's layers provide.
 *
 * @category models
 * @since 0.2.0
 */
export type Services = Sessions.Sessions | Modes.Modes | McpSessions

/**
 * This server's name, recorded with each call it serves (in the audit), when
 * it has one: `ugent serve --instance`, or `<host>-<pid>` in a room.
 *
 * @category services
 * @since 0.2.0
 */
export const Instance = Context.Reference<string | undefined>("ugent/agentese/SessionState/Instance", {
  defaultValue: () => undefined
})

/**
 * The default name of an instance: its host and process id.
 *
 * @category services
 * @since 0.2.0
 */
export const defaultInstance = (): string => `${hostname()}-${process.pid}`

/**
 * The session state of one process: proofs and modes in memory (bounded),
 * MCP sessions kept by the endpoint itself.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerMemory = (): Layer.Layer<Services> =>
  Layer.mergeAll(
    Sessions.layerMemory(),
    Modes.layerMemory,
    Layer.succeed(
      McpSessions,
      McpSessions.of({
        shared: false,
        open: () => Effect.void,
        find: () => Effect.succeed(undefined),
        end: () => Effect.void
      })
    )
  )

/**
 * The start of a room was refused: the room is recorded with another proof
 * key or configuration than this instance's, or its store cannot be asked.
 *
 * @category errors
 * @since 0.2.0
 */
export class RoomMismatch extends Schema.TaggedError<RoomMismatch>()("RoomMismatch", {
  room: Schema.String,
  problem: Schema.String
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    return `the room ${this.room}: ${this.problem}`
  }
}

/**
 * What every instance of a room must agree on, each part as a short
 * fingerprint (never the key itself): recorded by the first instance, and
 * compared by every later one.
 *
 * @category models
 * @since 0.2.0
 */
export type Agreement = Readonly<Record<string, string>>

/** A fingerprint of the proof key: an HMAC under the key, so it tells nothing of the key. */
export const keyFingerprint = (key: Uint8Array): string =>
  createHmac("sha256", key).update("ugent room proof key").digest("hex").slice(0, 16)

/** A fingerprint of a JSON value (a recipe, the limits). */
export const fingerprint = (value: unknown): string =>
  createHash("sha256")
    .update(JSON.stringify(value ?? null))
    .digest("hex")
    .slice(0, 16)

/**
 * How a room keeps its state in Redis.
 *
 * @category models
 * @since 0.2.0
 */
export interface RedisOptions {
  /** The room's name: its keys are `ugent:room:<name>:…`, so rooms may share one Redis. */
  readonly room: string
  /** How long remembered proofs and plan mode outlive their last use (default 24 hours). */
  readonly ttlMillis?: number | undefined
  /** When Redis does not answer a mode lookup: run as execute mode (`"allow"`) or refuse the call (`"fail"`). */
  readonly onStoreError?: OnStoreErrorPolicy | undefined
  /** The configuration every instance must share, besides the proof key (e.g. fingerprints of the recipe and limits). */
  readonly agreement?: Agreement | undefined
}

// Keeps a proof of the whole file when a proof of part of it with the same content comes; refreshes the TTL.
// Sent once and then called by its hash (EVALSHA).
const rememberScript = Redis.script(
  (key: string, path: string, value: string, hash: string, whole: string, ttl: string) => [
    key,
    path,
    value,
    hash,
    whole,
    ttl
  ],
  {
    numberOfKeys: 1,
    lua: `
local known = redis.call('HGET', KEYS[1], ARGV[1])
if known and ARGV[4] == '0' then
  local k = cjson.decode(known)
  if k.h == ARGV[3] and k.w == 1 then
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`
  }
)

const unavailable = (e: Redis.RedisError) =>
  new Sessions.SessionStoreUnavailable({
    detail: e.cause instanceof Error ? e.cause.message : String(e.cause)
  })

const decodeSession = (raw: string | null): McpSession | undefined => {
  if (raw === null) return undefined
  try {
    const parsed = JSON.parse(raw) as McpSession
    return typeof parsed.protocolVersion === "string" ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * The session state of a room, in the Redis of the context: every instance
 * started with the same room name shares the proofs, modes and MCP sessions.
 * Building it records the room's agreement (the proof key's fingerprint and
 * `agreement`, kept while any instance lives and 30 s after), or, when a
 * live room recorded a different one, fails with a {@link RoomMismatch}
 * naming what differs; it also fails when Redis does not answer, since the
 * key cannot then be compared.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerRedis = (options: RedisOptions): Layer.Layer<Services, RoomMismatch, Redis.Redis> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const redis = yield* Redis.Redis
      const prefix = `ugent:room:${options.room}:`
      const ttl = String(options.ttlMillis ?? 86_400_000)
      const policy = options.onStoreError ?? "allow"
      yield* agree(redis, options.room, prefix, {
        "proof key": keyFingerprint(yield* ReadProof.Key),
        ...options.agreement
      })
      const remember = redis.eval(rememberScript)
      const proofsKey = (session: string) => `${prefix}proofs:${session}`
      const modeKey = (key: string) => `${prefix}mode:${key}`
      const mcpKey = (id: string) => `${prefix}mcp:${id}`
      // A proof that cannot be remembered or found is as if never shown: the edit is refused, never run unproven.
      const sessions = Sessions.Sessions.of({
        remember: (session, path, proof) =>
          Effect.ignore(
            remember(
              proofsKey(session),
              path,
              JSON.stringify({ t: proof.token, h: proof.hash, w: proof.coverage._tag === "Whole" ? 1 : 0 }),
              proof.hash,
              proof.coverage._tag === "Whole" ? "1" : "0",
              ttl
            )
          ),
        proofOf: (session, path) =>
          redis.send<string | null>("HGET", proofsKey(session), path).pipe(
            Effect.map((raw) => (raw === null ? undefined : (JSON.parse(raw) as { readonly t: string }).t)),
            Effect.catch(() => Effect.succeed(undefined))
          ),
        end: (session) => Effect.ignore(redis.send("DEL", proofsKey(session)))
      })
      const modes = Modes.Modes.of({
        get: (key) =>
          redis.send<string | null>("GET", modeKey(key)).pipe(
            Effect.map((raw): Modes.Mode => (raw === "plan" ? "plan" : "execute")),
            Effect.catch((e) => (policy === "fail" ? Effect.fail(unavailable(e)) : Effect.succeed("execute" as const)))
          ),
        set: (key, mode) =>
          Effect.mapError(
            mode === "plan" ? redis.send("SET", modeKey(key), "plan", "PX", ttl) : redis.send("DEL", modeKey(key)),
            unavailable
          ).pipe(Effect.asVoid)
      })
      const mcp = McpSessions.of({
        shared: true,
        open: (id, session, idleMillis) =>
          Effect.mapError(
            redis.send("SET", mcpKey(id), JSON.stringify(session), "PX", String(idleMillis)),
            unavailable
          ).pipe(Effect.asVoid),
        find: (id, idleMillis) =>
          Effect.map(
            Effect.mapError(redis.send<string | null>("GETEX", mcpKey(id), "PX", String(idleMillis)), unavailable),
            decodeSession
          ),
        end: (id) => Effect.asVoid(Effect.mapError(redis.send("DEL", mcpKey(id)), unavailable))
      })
      return Context.make(Sessions.Sessions, sessions).pipe(
        Context.add(Modes.Modes, modes),
        Context.add(McpSessions, mcp)
      )
    })
  )

/** How long a room's agreement outlives its last instance, in milliseconds. */
const agreementMillis = "30000"

/** Records the room's agreement, or compares this instance's with the one recorded. */
const agree = (redis: Redis.Redis["Service"], room: string, prefix: string, mine: Agreement) =>
  Effect.gen(function* () {
    const key = `${prefix}agreement`
    const recorded = yield* redis
      .send<string | null>("SET", key, JSON.stringify(mine), "NX", "GET", "PX", agreementMillis)
      .pipe(
        Effect.mapError(
          (e) =>
            new RoomMismatch({
              room,
              problem: `its Redis does not answer (${e.cause instanceof Error ? e.cause.message : String(e.cause)}), so this instance's proof key cannot be compared with the room's. Start Redis, then this instance.`
            })
        )
      )
    // The agreement lasts while an instance lives: each renews it, and a room restarted with a new key is not refused.
    const renew = Effect.ignore(redis.send("PEXPIRE", key, agreementMillis))
    yield* Effect.forkScoped(Effect.repeat(Effect.delay(renew, "10 seconds"), Schedule.forever))
    if (recorded === null) return
    let theirs: Agreement
    try {
      theirs = JSON.parse(recorded) as Agreement
    } catch {
      theirs = {}
    }
    const differ = [...new Set([...Object.keys(theirs), ...Object.keys(mine)])].filter((k) => theirs[k] !== mine[k])
    if (differ.length === 0) return
    return yield* new RoomMismatch({
      room,
      problem: `this instance's ${differ.join(", ")} ${differ.length === 1 ? "differs" : "differ"} from the room's (${differ
        .map((k) => `${k}: room ${theirs[k] ?? "none"}, this instance ${mine[k] ?? "none"}`)
        .join(
          "; "
        )}). Start every instance of a room with the same UGENT_PROOF_KEY, recipe and limits, or give this one another --room.`
    })
  })
