/**
 * `Sessions` remembers, for a caller in a stateful session (an MCP
 * connection, an agent loop), the read proofs the road has handed it, so a
 * write in that session needs no token from the model: the road supplies the
 * newest proof of the file being written. A token the caller sends is still
 * accepted (and wins), and calls outside a session (stateless HTTP) must
 * carry one. A proof only stands for what the caller was shown: a result
 * diverted to working memory remembers none.
 *
 * The memory is bounded: the newest 1,000 sessions, each with the proofs of
 * its newest 10,000 files.
 *
 * @since 0.2.0
 */
import type { ReadProof, ToolError } from "@ugent/core"
import { Context, Effect, Layer, Schema } from "effect"

/**
 * The shared session state (a room's Redis) did not answer: the call is
 * refused rather than run without its session (its plan mode unknown).
 *
 * @category errors
 * @since 0.2.0
 */
export class SessionStoreUnavailable extends Schema.TaggedError<SessionStoreUnavailable>()("SessionStoreUnavailable", {
  detail: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  static readonly retryable = true
  override get message(): string {
    return `The session store did not answer (${this.detail}). Try again in a few seconds; if it persists, the server's Redis is down.`
  }
}

/**
 * @category models
 * @since 0.2.0
 */
export interface SessionsShape {
  /**
   * Remembers a proof for a file (its canonical, workspace-relative path) in
   * a session. A proof of part of a file does not replace one of the whole
   * file with the same content.
   */
  readonly remember: (session: string, path: string, proof: ReadProof.ReadProof) => Effect.Effect<void>
  /** The newest proof token of a file in a session, if any. */
  readonly proofOf: (session: string, path: string) => Effect.Effect<string | undefined>
  /** Forgets a session (its connection closed). */
  readonly end: (session: string) => Effect.Effect<void>
}

/**
 * The session of the call being made, as the road sets it for the tools it
 * runs (`undefined` outside a session).
 *
 * @category services
 * @since 0.2.0
 */
export const Current = Context.Reference<string | undefined>("ugent/agentese/Sessions/Current", {
  defaultValue: () => undefined
})

/**
 * @category services
 * @since 0.2.0
 */
export class Sessions extends Context.Service<Sessions, SessionsShape>()("ugent/agentese/Sessions") {}

/**
 * Sessions in memory, bounded (least recently used go first).
 *
 * **Example** (A proof remembered in one session only)
 * ```ts
 * import { Sessions } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { ReadProof } from "@ugent/core"
 * const program = Effect.gen(function* () {
 *   const sessions = yield* Sessions.Sessions
 *   const proof = yield* ReadProof.issue({ path: "src/a.ts", content: "x", coverage: { _tag: "Whole" } })
 *   yield* sessions.remember("mcp-1", "src/a.ts", proof)
 *   const mine = yield* sessions.proofOf("mcp-1", "src/a.ts")
 *   return [mine === proof.token, yield* sessions.proofOf("mcp-2", "src/a.ts")]
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(Sessions.layerMemory()))))
 * // => [ true, undefined ]
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layerMemory = (
  options: { readonly maxSessions?: number | undefined; readonly maxFiles?: number | undefined } = {}
): Layer.Layer<Sessions> =>
  Layer.sync(Sessions, () => {
    const maxSessions = options.maxSessions ?? 1000
    const maxFiles = options.maxFiles ?? 10_000
    // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
    const sessions = new Map<string, Map<string, ReadProof.ReadProof>>()
    const touch = (session: string): Map<string, ReadProof.ReadProof> => {
      let files = sessions.get(session)
      if (files === undefined) files = new Map()
      else sessions.delete(session)
      sessions.set(session, files)
      while (sessions.size > maxSessions) sessions.delete(sessions.keys().next().value!)
      return files
    }
    return Sessions.of({
      remember: (session, path, proof) =>
        Effect.sync(() => {
          const files = touch(session)
          const known = files.get(path)
          if (
            known !== undefined &&
            known.hash === proof.hash &&
            known.coverage._tag === "Whole" &&
            proof.coverage._tag !== "Whole"
          ) {
            return
          }
          files.delete(path)
          files.set(path, proof)
          while (files.size > maxFiles) files.delete(files.keys().next().value!)
        }),
      proofOf: (session, path) => Effect.sync(() => sessions.get(session)?.get(path)?.token),
      end: (session) => Effect.sync(() => void sessions.delete(session))
    })
  })
