/**
 * A `ReadProof` says "this caller has seen these bytes of this file": the
 * canonical path, the SHA-256 of the content, the part that was shown
 * (coverage: the whole file or a line range) and when. Writes and edits
 * require one, and succeed only if the file still hashes to it
 * (read-before-write).
 *
 * A proof is unforgeable. In process its type carries a brand that no object
 * literal has, and its only constructor, {@link issue}, signs it; across a
 * protocol boundary it travels as a token (`rp1.<payload>.<hmac>`) whose
 * schema, {@link ReadProofFromToken}, verifies the HMAC on decode with the
 * server's key ({@link Key}: random per process unless configured, so
 * several processes can share one).
 *
 * @since 0.1.0
 */
import {
  createHash,
  createHmac,
  hash as oneShot,
  createSecretKey,
  type KeyObject,
  randomBytes,
  timingSafeEqual
} from "node:crypto"
import { Clock, Context, Effect, Layer, Option, Schema, SchemaIssue, SchemaTransformation } from "effect"
import type { Kind } from "./ToolError.ts"

declare const Brand: unique symbol

/**
 * The part of a file a proof covers: the whole file, or lines `start..end`
 * (1-based, inclusive).
 *
 * @category models
 * @since 0.1.0
 */
export type Coverage =
  | { readonly _tag: "Whole" }
  | { readonly _tag: "Lines"; readonly start: number; readonly end: number }

/**
 * @category schemas
 * @since 0.1.0
 */
export const CoverageSchema: Schema.Codec<Coverage> = Schema.Union([
  Schema.TaggedStruct("Whole", {}),
  Schema.TaggedStruct("Lines", { start: Schema.Int, end: Schema.Int })
])

/**
 * A proof of a read.
 *
 * @category models
 * @since 0.1.0
 */
export interface ReadProof {
  readonly [Brand]: "ReadProof"
  /**
   * The file: its canonical path relative to its workspace (a token never
   * names a host path), or the path the issuer gave.
   */
  readonly path: string
  /** Which workspace the path is relative to: an opaque fingerprint of its root (see {@link scopeOf}), or `""`. */
  readonly workspace: string
  /** SHA-256 of the file's bytes, hex. */
  readonly hash: string
  /** Size in bytes when read. */
  readonly size: number
  readonly coverage: Coverage
  /** Epoch milliseconds. */
  readonly issuedAt: number
  /** The signed token, the proof's form across a boundary. */
  readonly token: string
}

/**
 * The input shape of a causal tool: it requires a proof.
 *
 * @category type-level
 * @since 0.1.0
 */
export interface RequiresProof {
  readonly proof: ReadProof
}

/**
 * The server's signing key: 32 random bytes per process unless configured.
 *
 * @category services
 * @since 0.1.0
 */
const processKey = randomBytes(32)
export const Key = Context.Reference<Uint8Array>("ugent/ReadProof/Key", { defaultValue: () => processKey })

/**
 * A layer that sets the signing key, so that several processes of one server
 * accept each other's proofs. The secret must be at least 32 bytes.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerKey = (secret: string | Uint8Array): Layer.Layer<never> => {
  const bytes = typeof secret === "string" ? new TextEncoder().encode(secret) : secret
  if (bytes.length < 32) throw new Error("ReadProof.layerKey: the secret must be at least 32 bytes")
  return Layer.succeed(Key, bytes)
}

interface Payload {
  readonly p: string
  /** The workspace fingerprint; absent for proofs issued outside a workspace. */
  readonly w?: string
  readonly h: string
  readonly s: number
  readonly c: Coverage
  readonly t: number
}

/**
 * How every proof token begins (`rp1.<payload>.<hmac>`): text without it
 * carries no token.
 *
 * @category constants
 * @since 0.2.0
 */
export const tokenPrefix = "rp1."

const b64 = (data: Uint8Array | string) => Buffer.from(data).toString("base64url")
// Preparing a secret key costs more than the HMAC itself, so each key is prepared once.
const prepared = new WeakMap<Uint8Array, KeyObject>()
const sign = (key: Uint8Array, body: string) => {
  let secret = prepared.get(key)
  if (secret === undefined) {
    secret = createSecretKey(key)
    prepared.set(key, secret)
  }
  return createHmac("sha256", secret).update(body).digest()
}

class ProofImpl implements ReadProof {
  declare readonly [Brand]: "ReadProof"
  readonly path: string
  readonly workspace: string
  readonly hash: string
  readonly size: number
  readonly coverage: Coverage
  readonly issuedAt: number
  readonly token: string
  constructor(payload: Payload, token: string) {
    this.path = payload.p
    this.workspace = payload.w ?? ""
    this.hash = payload.h
    this.size = payload.s
    this.coverage = payload.c
    this.issuedAt = payload.t
    this.token = token
    Object.freeze(this)
  }
  toJSON() {
    return {
      _id: "ReadProof",
      path: this.path,
      workspace: this.workspace,
      hash: this.hash,
      coverage: this.coverage,
      issuedAt: this.issuedAt
    }
  }
}

const mint = (key: Uint8Array, payload: Payload): ProofImpl => {
  const body = b64(JSON.stringify(payload))
  return new ProofImpl(payload, `${tokenPrefix}${body}.${b64(sign(key, body))}`)
}

const verifyToken = (key: Uint8Array, token: string): Option.Option<ProofImpl> => {
  const parts = token.split(".")
  if (parts.length !== 3 || parts[0] !== "rp1") return Option.none()
  const [, body, mac] = parts as [string, string, string]
  const expected = sign(key, body)
  const given = Buffer.from(mac, "base64url")
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return Option.none()
  try {
    const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Payload
    if (
      typeof payload.p !== "string" ||
      typeof payload.h !== "string" ||
      typeof payload.t !== "number" ||
      (payload.w !== undefined && typeof payload.w !== "string")
    ) {
      return Option.none()
    }
    return Option.some(new ProofImpl(payload, token))
  } catch {
    return Option.none()
  }
}

/**
 * SHA-256 of some bytes (or of a string's UTF-8 bytes), hex.
 *
 * @category hashing
 * @since 0.1.0
 */
export const hash = (content: Uint8Array | string): string => oneShot("sha256", content, "hex")

/**
 * Issues a signed proof for content just shown to a caller. Only tools that
 * show file content call this.
 *
 * **Example** (Issuing and checking a proof)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { Effect } from "effect"
 * const proof = Effect.runSync(ReadProof.issue({ path: "/ws/a.txt", content: "hello\n", coverage: { _tag: "Whole" } }))
 * console.log(ReadProof.verdict(proof, { hash: ReadProof.hash("hello\n") }))
 * // => unchanged
 * console.log(ReadProof.verdict(proof, { hash: ReadProof.hash("changed\n") }))
 * // => changed
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const issue = (options: {
  readonly path: string
  /** The workspace the path is relative to (its {@link scopeOf}). */
  readonly workspace?: string | undefined
  readonly content: Uint8Array | string
  readonly coverage: Coverage
}): Effect.Effect<ReadProof> =>
  Effect.gen(function* () {
    const key = yield* Key
    const issuedAt = yield* Clock.currentTimeMillis
    const size = typeof options.content === "string" ? Buffer.byteLength(options.content) : options.content.length
    return mint(key, {
      p: options.path,
      ...(options.workspace !== undefined && options.workspace !== "" ? { w: options.workspace } : {}),
      h: hash(options.content),
      s: size,
      c: options.coverage,
      t: issuedAt
    })
  })

/**
 * Issues a proof from a hash already computed (for content streamed while
 * hashed).
 *
 * @category constructors
 * @since 0.1.0
 */
export const issueHashed = (options: {
  readonly path: string
  readonly workspace?: string | undefined
  readonly hash: string
  readonly size: number
  readonly coverage: Coverage
}): Effect.Effect<ReadProof> =>
  Effect.gen(function* () {
    const key = yield* Key
    const issuedAt = yield* Clock.currentTimeMillis
    return mint(key, {
      p: options.path,
      ...(options.workspace !== undefined && options.workspace !== "" ? { w: options.workspace } : {}),
      h: options.hash,
      s: options.size,
      c: options.coverage,
      t: issuedAt
    })
  })

const scopes = new Map<string, string>()

/**
 * The fingerprint of a workspace root that proofs carry instead of its
 * path: two workspaces sharing a key do not accept each other's proofs of a
 * file with the same relative path, and no token names a host path.
 *
 * **Example** (Opaque and stable)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * const a = ReadProof.scopeOf("/home/me/project")
 * console.log(a === ReadProof.scopeOf("/home/me/project"), a.includes("project"), a.length)
 * // => true false 16
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const scopeOf = (root: string): string => {
  let found = scopes.get(root)
  if (found === undefined) {
    found = createHash("sha256").update(`ugent-workspace\u0000${root}`).digest("base64url").slice(0, 16)
    if (scopes.size > 1000) scopes.clear()
    scopes.set(root, found)
  }
  return found
}

/**
 * The proof a value really carries: the payload of its signed token, checked
 * with the current key, as a fresh proof. Only that payload is trusted, never
 * the value's own fields, so an object that pairs a genuine token with
 * another file's path or hash yields `None`, as does a copy, a forgery or a
 * proof signed by another server.
 *
 * **Example** (Fields that are not the token's are refused)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { Effect, Option } from "effect"
 * const proof = Effect.runSync(ReadProof.issue({ path: "/ws/b.txt", content: "b", coverage: { _tag: "Whole" } }))
 * const relabelled = Object.assign(Object.create(Object.getPrototypeOf(proof)), { ...proof, path: "/ws/a.txt" })
 * console.log(Option.isSome(Effect.runSync(ReadProof.verify(proof))), Option.isSome(Effect.runSync(ReadProof.verify(relabelled))))
 * // => true false
 * ```
 *
 * @category verification
 * @since 0.1.0
 */
export const verify = (u: unknown): Effect.Effect<Option.Option<ReadProof>> =>
  Effect.map(Key, (key) => {
    if (!(u instanceof ProofImpl) || typeof u.token !== "string") return Option.none()
    const signed = verifyToken(key, u.token)
    if (Option.isNone(signed)) return Option.none()
    const p = signed.value
    const same =
      u.path === p.path &&
      u.workspace === p.workspace &&
      u.hash === p.hash &&
      u.size === p.size &&
      u.issuedAt === p.issuedAt &&
      JSON.stringify(u.coverage) === JSON.stringify(p.coverage)
    return same ? signed : Option.none()
  })

/**
 * Whether a value is a genuine proof signed with the current key and whose
 * fields are exactly its token's: an object with the same fields, a proof
 * signed by another server, or a genuine token relabelled with another
 * file's path or hash is not. Tools that act on a proof should use
 * {@link verify} and read the fields of what it returns.
 *
 * @category guards
 * @since 0.1.0
 */
export const isReadProof = (u: unknown): Effect.Effect<boolean> => Effect.map(verify(u), Option.isSome)

/**
 * Decodes and verifies a token with the current key.
 *
 * @category decoding
 * @since 0.1.0
 */
export const fromToken = (token: string): Effect.Effect<Option.Option<ReadProof>> =>
  Effect.map(Key, (key) => verifyToken(key, token))

const isProofInstance = (u: unknown): u is ReadProof => u instanceof ProofImpl

/**
 * Whether a value has the shape of a proof made by this module, without
 * checking its signature: for recognizing proofs in a result (to remember or
 * fingerprint them), never for trusting one (use {@link verify}).
 *
 * @category guards
 * @since 0.2.0
 */
export const isProofLike: (u: unknown) => u is ReadProof = isProofInstance

/**
 * The schema of a proof: a signed token string on the wire, a verified
 * `ReadProof` in process. Decoding fails for a forged, altered or foreign
 * token.
 *
 * **Example** (A token survives a round trip; a forged one does not)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { Effect, Exit, Schema } from "effect"
 * const proof = Effect.runSync(ReadProof.issue({ path: "/ws/a.txt", content: "x", coverage: { _tag: "Whole" } }))
 * const token = Schema.encodeSync(ReadProof.ReadProofFromToken)(proof)
 * const back = Effect.runSync(Schema.decodeUnknownEffect(ReadProof.ReadProofFromToken)(token))
 * console.log(back.hash === proof.hash)
 * // => true
 * const forged = token.slice(0, -4) + "AAAA"
 * console.log(Exit.isFailure(Effect.runSyncExit(Schema.decodeUnknownEffect(ReadProof.ReadProofFromToken)(forged))))
 * // => true
 * ```
 *
 * @category schemas
 * @since 0.1.0
 */
export const ReadProofFromToken: Schema.Codec<ReadProof, string> = Schema.String.annotate({
  description:
    "A read proof token (rp1.…) returned by a tool that showed you the file's content. Pass it back unchanged."
}).pipe(
  Schema.decodeTo(
    Schema.declare(isProofInstance, { title: "ReadProof" }),
    SchemaTransformation.transformEffect<ReadProof, string>({
      decode: (token, options) =>
        Effect.flatMap(fromToken(token), (proof) =>
          Option.isSome(proof)
            ? Effect.succeed(proof.value)
            : Effect.fail(
                new SchemaIssue.InvalidValue(
                  {
                    message:
                      "Invalid read proof: not issued by this server or altered. Read the file again and use the proof it returns."
                  },
                  token,
                  options
                )
              )
        ),
      encode: (proof) => Effect.succeed(proof.token)
    })
  )
)

/**
 * Whether a file is as its proof saw it.
 *
 * @category models
 * @since 0.1.0
 */
export type Verdict = "unchanged" | "changed" | "deleted" | "never-read"

/**
 * Compares a proof with the file's current hash (`undefined` when the file no
 * longer exists). No proof gives `"never-read"`.
 *
 * @category verification
 * @since 0.1.0
 */
export const verdict = (proof: ReadProof | undefined, current: { readonly hash: string } | undefined): Verdict => {
  if (proof === undefined) return "never-read"
  if (current === undefined) return "deleted"
  return current.hash === proof.hash ? "unchanged" : "changed"
}

/**
 * Whether a proof covers the lines `start..end` (1-based, inclusive).
 *
 * @category verification
 * @since 0.1.0
 */
export const covers = (proof: ReadProof, start: number, end: number): boolean =>
  proof.coverage._tag === "Whole" || (proof.coverage.start <= start && end <= proof.coverage.end)

/**
 * Whether a proof was issued within `maxAgeMillis` of `now` (the optional
 * second fence after the hash).
 *
 * @category verification
 * @since 0.1.0
 */
export const isFresh = (proof: ReadProof, now: number, maxAgeMillis: number): boolean =>
  now - proof.issuedAt <= maxAgeMillis

/** A duration in its largest whole unit, for a message. */
const humanAge = (millis: number): string => {
  const s = Math.floor(millis / 1000)
  if (s < 120) return `${s} s`
  if (s < 7200) return `${Math.floor(s / 60)} min`
  if (s < 172_800) return `${Math.floor(s / 3600)} h`
  return `${Math.floor(s / 86_400)} days`
}

/**
 * Why a proof was not accepted: the file changed or was deleted since it was
 * read, it was never read, the proof is forged or for another file, too old,
 * or does not cover the edited text.
 *
 * @category errors
 * @since 0.1.0
 */
export class ProofRejected extends Schema.TaggedError<ProofRejected>()("ProofRejected", {
  path: Schema.String,
  reason: Schema.Literals([
    "changed",
    "deleted",
    "never-read",
    "invalid",
    "other-file",
    "expired",
    "not-covering",
    "partial"
  ]),
  /** For `expired`: how old the proof was, and the server's bound, in milliseconds. */
  ageMillis: Schema.optionalKey(Schema.Number),
  maxAgeMillis: Schema.optionalKey(Schema.Number)
}) {
  static readonly kind: Kind = "conflict"
  override get message(): string {
    const p = this.path
    const messages: Record<typeof this.reason, string> = {
      changed: `${p} changed since you read it. Read it again, then retry with the new proof.`,
      deleted: `${p} was deleted since you read it. Check the path, or create the file without a proof.`,
      "never-read": `${p} exists and you have not read it. Read it first (file.read returns a proof), then retry with that proof.`,
      invalid: `The proof for ${p} is not valid (forged, altered or from another server). Read the file again and use the proof it returns.`,
      "other-file": `The proof given is for another file, not ${p}. Use the proof returned by reading ${p}.`,
      expired:
        this.ageMillis !== undefined && this.maxAgeMillis !== undefined
          ? `The proof for ${p} was issued ${humanAge(this.ageMillis)} ago, past this server's bound of ${humanAge(this.maxAgeMillis)} for a proof. Read the file again and retry with the new proof.`
          : `The proof for ${p} is too old. Read the file again and retry.`,
      "not-covering": `The proof for ${p} does not cover the text you edit. Read the lines you edit (or the whole file), then retry.`,
      partial: `Overwriting ${p} needs a proof of the whole file, and yours covers only some lines. Read the whole file, then retry.`
    }
    return messages[this.reason]
  }
}
