/**
 * The laws of read-before-write, as properties of a scenario run against the
 * file tools under test: a write (or an edit) succeeds with a fresh proof of
 * what it overwrites, and fails, changing nothing, with a missing proof, a
 * stale proof (the file changed behind the tool's back), a forged proof, a
 * proof of another file, or a proof already spent by an earlier write.
 *
 * The tools are reached through a {@link Fixture}: a few functions that the
 * file tools' authors write once, so the laws know nothing of their inputs.
 *
 * @since 0.1.0
 */
import type { ReadProof } from "@ugent/core"
import { Cause, Effect, Exit, Predicate, type Scope } from "effect"
import { show } from "./internal/show.ts"
import * as Law from "./Law.ts"

/**
 * One write the laws ask for.
 *
 * @category models
 * @since 0.1.0
 */
export interface WriteRequest {
  readonly path: string
  /** The proof to present; `undefined` for "no proof". */
  readonly proof: ReadProof.ReadProof | undefined
  /** The new content of the file. */
  readonly content: string
  /** The content the proof saw (for an edit: the text to replace). */
  readonly previous: string
}

/**
 * Which refusal a law expects.
 *
 * - `missing`: no proof for an existing file;
 * - `stale`: the file changed after the read;
 * - `forged`: a proof the server never issued for this file and content;
 * - `other-file`: a genuine proof of another file with the same content;
 * - `spent`: the proof that allowed an earlier write, presented again.
 *
 * @category models
 * @since 0.1.0
 */
export type Refusal = "missing" | "stale" | "forged" | "other-file" | "spent"

/**
 * The forgeries tried:
 *
 * - `literal`: a token built by hand for this file and hash, with a bogus signature;
 * - `tampered`: the genuine proof with its signature altered;
 * - `foreign`: a proof of this exact content signed with another server's key;
 * - `transplanted`: this file's fields on a proof object carrying another file's genuine token.
 *
 * @category models
 * @since 0.1.0
 */
export type Forgery = "literal" | "tampered" | "foreign" | "transplanted"

/**
 * How the laws reach the tools under test. Every function may need the
 * services `R` (a workspace…), provided with `provide`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Fixture<R = never> {
  /** Creates a file with this content for one case and returns the path the tools take. */
  readonly makeFile: (file: {
    readonly name: string
    readonly content: string
  }) => Effect.Effect<string, unknown, R | Scope.Scope>
  /** Reads the file with the tool that shows content, and returns the proof it issued. */
  readonly read: (path: string) => Effect.Effect<ReadProof.ReadProof, unknown, R>
  /** The causal write (or edit) under test. */
  readonly write: (request: WriteRequest) => Effect.Effect<unknown, unknown, R>
  /** Changes the file behind the tools' back. */
  readonly modify: (path: string, content: string) => Effect.Effect<void, unknown, R>
  /** The file's current content. */
  readonly contents: (path: string) => Effect.Effect<string, unknown, R>
  /** Whether an error is the refusal a law expects. */
  readonly rejected: (error: unknown, refusal: Refusal) => boolean
  /** The fresh proof a successful write returned, if the tool returns one. */
  readonly proofOf?: ((result: unknown) => ReadProof.ReadProof | undefined) | undefined
  /** Takes back the newest write of the file (restores its checkpoint), if the tools keep checkpoints. */
  readonly undo?: ((path: string) => Effect.Effect<unknown, unknown, R>) | undefined
  /** Asks a person to approve a write and answers it, if the host keeps approvals bound to bytes. */
  readonly approve?: Approvals<R> | undefined
}

/**
 * How the laws reach a host's approvals: `request` makes a write that needs
 * approval and returns the id it waits under (nothing written); `run`
 * approves that id, as a person would, and makes the same write again;
 * `stale` tells the refusal of an approval given for other bytes.
 *
 * @category models
 * @since 0.3.0
 */
export interface Approvals<R = never> {
  readonly request: (request: WriteRequest) => Effect.Effect<string, unknown, R>
  readonly run: (id: string, request: WriteRequest) => Effect.Effect<unknown, unknown, R>
  readonly stale: (error: unknown) => boolean
}

const expectedReasons: Readonly<Record<Refusal, ReadonlyArray<string>>> = {
  missing: ["never-read"],
  stale: ["changed"],
  forged: ["invalid", "other-file"],
  "other-file": ["other-file"],
  spent: ["changed"]
}

/**
 * The default test of a refusal: a `ProofRejected` whose reason fits the law
 * (`never-read`; `changed`; `invalid` or `other-file`; `other-file`; `changed`).
 *
 * **Example** (Accepting a stale-proof refusal)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws } from "@ugent/laws"
 * const error = new ReadProof.ProofRejected({ path: "a.txt", reason: "changed" })
 * console.log(CausalLaws.proofRejected(error, "stale"), CausalLaws.proofRejected(error, "missing"))
 * // => true false
 * ```
 *
 * @category refusals
 * @since 0.1.0
 */
export const proofRejected = (error: unknown, refusal: Refusal): boolean =>
  Predicate.isTagged(error, "ProofRejected") &&
  Predicate.hasProperty(error, "reason") &&
  typeof error.reason === "string" &&
  expectedReasons[refusal].includes(error.reason)

/** A step of the scenario that is not the write under test failed: the fixture is wrong, not the law. */
class StepFailed {
  readonly _tag = "StepFailed"
  readonly step: string
  readonly error: unknown
  constructor(step: string, error: unknown) {
    this.step = step
    this.error = error
  }
}

const step = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) =>
  Effect.mapError(effect, (e) => new StepFailed(name, e))

interface Outcome {
  readonly write: Exit.Exit<unknown, unknown>
  readonly contents: string
}

const setupProblem = (exit: Exit.Exit<unknown, unknown>): string | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const fail = exit.cause.reasons.find(Cause.isFailReason)
  if (fail !== undefined && fail.error instanceof StepFailed) {
    return `the set-up step "${fail.error.step}" failed: ${show(fail.error.error)}`
  }
  return `the scenario failed outside the write: ${show(exit)}`
}

const outcomeOf = (o: { readonly exit: Exit.Exit<unknown, unknown> }): Outcome | string => {
  const problem = setupProblem(o.exit)
  if (problem !== undefined) return problem
  return (o.exit as Exit.Success<Outcome>).value
}

const refused =
  (fixture: Fixture<unknown>, refusal: Refusal, expectedContents: string) =>
  (o: { readonly exit: Exit.Exit<unknown, unknown> }) => {
    const outcome = outcomeOf(o)
    if (typeof outcome === "string") return outcome
    if (Exit.isSuccess(outcome.write)) return `the write succeeded (${show(outcome.write.value)})`
    const fail = outcome.write.cause.reasons.find(Cause.isFailReason)
    if (fail === undefined) return `the write did not fail with a typed error: ${show(outcome.write)}`
    if (!fixture.rejected(fail.error, refusal))
      return `the write failed with ${show(fail.error)}, which is not the expected refusal`
    if (outcome.contents !== expectedContents) {
      return `the file changed anyway: it holds ${show(outcome.contents)} instead of ${show(expectedContents)}`
    }
    return undefined
  }

const accepted = (expectedContents: string) => (o: { readonly exit: Exit.Exit<unknown, unknown> }) => {
  const outcome = outcomeOf(o)
  if (typeof outcome === "string") return outcome
  if (Exit.isFailure(outcome.write)) return `the write failed: ${show(outcome.write)}`
  if (outcome.contents !== expectedContents) {
    return `the write succeeded but the file holds ${show(outcome.contents)} instead of ${show(expectedContents)}`
  }
  return undefined
}

// The laws receive the fixture with its services already erased: `CausalTests` provides them.
type AnyFixture = Fixture<unknown>

/**
 * The generated arguments of a causal law: file names and three distinct,
 * non-empty contents.
 *
 * @category models
 * @since 0.1.0
 */
export interface Contents {
  readonly names: readonly [string, string]
  readonly before: string
  readonly after: string
  readonly changed: string
}

const finish = (fixture: AnyFixture, path: string, write: Effect.Effect<unknown, unknown, unknown>) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(write)
    const contents = yield* step("contents", fixture.contents(path))
    return { write: exit, contents } satisfies Outcome
  })

/**
 * A write with a fresh proof of the whole file succeeds, and the file then
 * holds the new content.
 *
 * **Example** (A careful in-memory writer)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws, RuleSet } from "@ugent/laws"
 * import { Effect, Option } from "effect"
 * const files = new Map<string, string>()
 * const reject = (path: string, reason: "never-read" | "invalid" | "other-file" | "changed") => Effect.fail(new ReadProof.ProofRejected({ path, reason }))
 * const fixture: CausalLaws.Fixture = {
 *   makeFile: ({ name, content }) => Effect.sync(() => (files.set(name, content), name)),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, proof, content }) => Effect.gen(function* () {
 *     if (proof === undefined) return yield* reject(path, "never-read")
 *     const signed = yield* ReadProof.fromToken(proof.token)
 *     if (Option.isNone(signed) || !(yield* ReadProof.isReadProof(proof))) return yield* reject(path, "invalid")
 *     if (signed.value.path !== path) return yield* reject(path, "other-file")
 *     if (signed.value.hash !== ReadProof.hash(files.get(path)!)) return yield* reject(path, "changed")
 *     files.set(path, content)
 *     return yield* ReadProof.issue({ path, content, coverage: { _tag: "Whole" } })
 *   }),
 *   modify: (path, content) => Effect.sync(() => void files.set(path, content)),
 *   contents: (path) => Effect.sync(() => files.get(path)!),
 *   rejected: CausalLaws.proofRejected
 * }
 * const c = { names: ["a.txt", "b.txt"], before: "one", after: "two", changed: "three" } as const
 * console.log(await Effect.runPromise(RuleSet.evaluate(CausalLaws.freshProof(fixture, c))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const freshProof = (fixture: AnyFixture, c: Contents): Law.Holds =>
  Law.holds(
    "write with a fresh proof",
    Effect.gen(function* () {
      const path = yield* step("makeFile", fixture.makeFile({ name: c.names[0], content: c.before }))
      const proof = yield* step("read", fixture.read(path))
      return yield* finish(fixture, path, fixture.write({ path, proof, content: c.after, previous: c.before }))
    }),
    "the write succeeds and the file holds the new content",
    accepted(c.after)
  )

/**
 * A write to an existing file without a proof fails and changes nothing.
 *
 * **Example** (A careful in-memory writer)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws, RuleSet } from "@ugent/laws"
 * import { Effect, Option } from "effect"
 * const files = new Map<string, string>()
 * const reject = (path: string, reason: "never-read" | "invalid" | "other-file" | "changed") => Effect.fail(new ReadProof.ProofRejected({ path, reason }))
 * const fixture: CausalLaws.Fixture = {
 *   makeFile: ({ name, content }) => Effect.sync(() => (files.set(name, content), name)),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, proof, content }) => Effect.gen(function* () {
 *     if (proof === undefined) return yield* reject(path, "never-read")
 *     const signed = yield* ReadProof.fromToken(proof.token)
 *     if (Option.isNone(signed) || !(yield* ReadProof.isReadProof(proof))) return yield* reject(path, "invalid")
 *     if (signed.value.path !== path) return yield* reject(path, "other-file")
 *     if (signed.value.hash !== ReadProof.hash(files.get(path)!)) return yield* reject(path, "changed")
 *     files.set(path, content)
 *     return yield* ReadProof.issue({ path, content, coverage: { _tag: "Whole" } })
 *   }),
 *   modify: (path, content) => Effect.sync(() => void files.set(path, content)),
 *   contents: (path) => Effect.sync(() => files.get(path)!),
 *   rejected: CausalLaws.proofRejected
 * }
 * const c = { names: ["a.txt", "b.txt"], before: "one", after: "two", changed: "three" } as const
 * console.log(await Effect.runPromise(RuleSet.evaluate(CausalLaws.missingProof(fixture, c))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const missingProof = (fixture: AnyFixture, c: Contents): Law.Holds =>
  Law.holds(
    "write without a proof",
    Effect.gen(function* () {
      const path = yield* step("makeFile", fixture.makeFile({ name: c.names[0], content: c.before }))
      return yield* finish(
        fixture,
        path,
        fixture.write({ path, proof: undefined, content: c.after, previous: c.before })
      )
    }),
    "a refusal (missing proof) and an unchanged file",
    refused(fixture, "missing", c.before)
  )

/**
 * A write whose proof predates an external modification fails, and the
 * modification survives.
 *
 * **Example** (A careful in-memory writer)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws, RuleSet } from "@ugent/laws"
 * import { Effect, Option } from "effect"
 * const files = new Map<string, string>()
 * const reject = (path: string, reason: "never-read" | "invalid" | "other-file" | "changed") => Effect.fail(new ReadProof.ProofRejected({ path, reason }))
 * const fixture: CausalLaws.Fixture = {
 *   makeFile: ({ name, content }) => Effect.sync(() => (files.set(name, content), name)),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, proof, content }) => Effect.gen(function* () {
 *     if (proof === undefined) return yield* reject(path, "never-read")
 *     const signed = yield* ReadProof.fromToken(proof.token)
 *     if (Option.isNone(signed) || !(yield* ReadProof.isReadProof(proof))) return yield* reject(path, "invalid")
 *     if (signed.value.path !== path) return yield* reject(path, "other-file")
 *     if (signed.value.hash !== ReadProof.hash(files.get(path)!)) return yield* reject(path, "changed")
 *     files.set(path, content)
 *     return yield* ReadProof.issue({ path, content, coverage: { _tag: "Whole" } })
 *   }),
 *   modify: (path, content) => Effect.sync(() => void files.set(path, content)),
 *   contents: (path) => Effect.sync(() => files.get(path)!),
 *   rejected: CausalLaws.proofRejected
 * }
 * const c = { names: ["a.txt", "b.txt"], before: "one", after: "two", changed: "three" } as const
 * console.log(await Effect.runPromise(RuleSet.evaluate(CausalLaws.staleProof(fixture, c))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const staleProof = (fixture: AnyFixture, c: Contents): Law.Holds =>
  Law.holds(
    "write with a stale proof",
    Effect.gen(function* () {
      const path = yield* step("makeFile", fixture.makeFile({ name: c.names[0], content: c.before }))
      const proof = yield* step("read", fixture.read(path))
      yield* step("modify", fixture.modify(path, c.changed))
      return yield* finish(fixture, path, fixture.write({ path, proof, content: c.after, previous: c.before }))
    }),
    "a refusal (stale proof) and the external modification intact",
    refused(fixture, "stale", c.changed)
  )

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString("base64url")

/** The fields of a proof, with `token` replaced. */
const withToken = (proof: ReadProof.ReadProof, token: string, prototype: object): ReadProof.ReadProof =>
  // A forgery is by definition a value that claims the type without being issued; the cast states the claim.
  Object.freeze(
    Object.assign(Object.create(prototype), {
      path: proof.path,
      hash: proof.hash,
      size: proof.size,
      coverage: proof.coverage,
      issuedAt: proof.issuedAt,
      token
    })
  ) as ReadProof.ReadProof

/**
 * Forges a proof for the file `genuine` was issued for.
 *
 * **Example** (A transplanted proof)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws } from "@ugent/laws"
 * import { Effect } from "effect"
 * const genuine = Effect.runSync(ReadProof.issue({ path: "/ws/a.txt", content: "a", coverage: { _tag: "Whole" } }))
 * const other = Effect.runSync(ReadProof.issue({ path: "/ws/b.txt", content: "b", coverage: { _tag: "Whole" } }))
 * const forged = CausalLaws.forge("transplanted", genuine, { foreign: genuine, otherFile: other })
 * // The fields say a.txt, the genuine token inside says b.txt: a tool must trust only the token,
 * // and ReadProof.isReadProof (which checks that the fields are the token's) refuses it.
 * console.log(forged.path, forged.token === other.token, Effect.runSync(ReadProof.isReadProof(forged)))
 * // => /ws/a.txt true false
 * ```
 *
 * @category forgeries
 * @since 0.1.0
 */
export const forge = (
  forgery: Forgery,
  genuine: ReadProof.ReadProof,
  other: { readonly foreign: ReadProof.ReadProof; readonly otherFile: ReadProof.ReadProof }
): ReadProof.ReadProof => {
  switch (forgery) {
    case "literal": {
      const payload = b64(
        JSON.stringify({ p: genuine.path, h: genuine.hash, s: genuine.size, c: genuine.coverage, t: genuine.issuedAt })
      )
      return withToken(genuine, `rp1.${payload}.${b64(new Uint8Array(32))}`, Object.prototype)
    }
    case "tampered": {
      const parts = genuine.token.split(".")
      const mac = parts[2] ?? ""
      const flipped = (mac[0] === "A" ? "B" : "A") + mac.slice(1)
      return withToken(genuine, [parts[0], parts[1], flipped].join("."), Object.getPrototypeOf(genuine))
    }
    case "foreign":
      return other.foreign
    case "transplanted":
      return withToken(genuine, other.otherFile.token, Object.getPrototypeOf(genuine))
  }
}

/**
 * A write with a forged proof fails and changes nothing. `issueForeign`
 * issues a proof of the same file and content under another server's key.
 *
 * **Example** (Every forgery refused by a careful writer)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws, RuleSet } from "@ugent/laws"
 * import { Effect, Option } from "effect"
 * const files = new Map<string, string>()
 * const reject = (path: string, reason: "never-read" | "invalid" | "other-file" | "changed") => Effect.fail(new ReadProof.ProofRejected({ path, reason }))
 * const fixture: CausalLaws.Fixture = {
 *   makeFile: ({ name, content }) => Effect.sync(() => (files.set(name, content), name)),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, proof, content }) => Effect.gen(function* () {
 *     if (proof === undefined) return yield* reject(path, "never-read")
 *     const signed = yield* ReadProof.fromToken(proof.token)
 *     if (Option.isNone(signed) || !(yield* ReadProof.isReadProof(proof))) return yield* reject(path, "invalid")
 *     if (signed.value.path !== path) return yield* reject(path, "other-file")
 *     if (signed.value.hash !== ReadProof.hash(files.get(path)!)) return yield* reject(path, "changed")
 *     files.set(path, content)
 *     return yield* ReadProof.issue({ path, content, coverage: { _tag: "Whole" } })
 *   }),
 *   modify: (path, content) => Effect.sync(() => void files.set(path, content)),
 *   contents: (path) => Effect.sync(() => files.get(path)!),
 *   rejected: CausalLaws.proofRejected
 * }
 * const c = { names: ["a.txt", "b.txt"], before: "one", after: "two", changed: "three" } as const
 * const foreign = (genuine: ReadProof.ReadProof, content: string) =>
 *   ReadProof.issue({ path: genuine.path, content, coverage: genuine.coverage }).pipe(Effect.provide(ReadProof.layerKey("another server's key, 32 bytes long")))
 * for (const forgery of ["literal", "tampered", "foreign", "transplanted"] as const) {
 *   console.log(forgery, await Effect.runPromise(RuleSet.evaluate(CausalLaws.forgedProof(fixture, c, forgery, foreign))))
 * }
 * // => literal undefined
 * // => tampered undefined
 * // => foreign undefined
 * // => transplanted undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const forgedProof = (
  fixture: AnyFixture,
  c: Contents,
  forgery: Forgery,
  issueForeign: (genuine: ReadProof.ReadProof, content: string) => Effect.Effect<ReadProof.ReadProof>
): Law.Holds =>
  Law.holds(
    `write with a forged proof (${forgery})`,
    Effect.gen(function* () {
      const path = yield* step("makeFile", fixture.makeFile({ name: c.names[0], content: c.before }))
      const genuine = yield* step("read", fixture.read(path))
      const otherPath = yield* step("makeFile", fixture.makeFile({ name: c.names[1], content: c.changed }))
      const otherFile = yield* step("read", fixture.read(otherPath))
      const foreign = yield* issueForeign(genuine, c.before)
      const proof = forge(forgery, genuine, { foreign, otherFile })
      return yield* finish(fixture, path, fixture.write({ path, proof, content: c.after, previous: c.before }))
    }),
    "a refusal (forged proof) and an unchanged file",
    refused(fixture, "forged", c.before)
  )

/**
 * A genuine proof of another file, even one with the same content, does not
 * allow a write.
 *
 * **Example** (A careful in-memory writer)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws, RuleSet } from "@ugent/laws"
 * import { Effect, Option } from "effect"
 * const files = new Map<string, string>()
 * const reject = (path: string, reason: "never-read" | "invalid" | "other-file" | "changed") => Effect.fail(new ReadProof.ProofRejected({ path, reason }))
 * const fixture: CausalLaws.Fixture = {
 *   makeFile: ({ name, content }) => Effect.sync(() => (files.set(name, content), name)),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, proof, content }) => Effect.gen(function* () {
 *     if (proof === undefined) return yield* reject(path, "never-read")
 *     const signed = yield* ReadProof.fromToken(proof.token)
 *     if (Option.isNone(signed) || !(yield* ReadProof.isReadProof(proof))) return yield* reject(path, "invalid")
 *     if (signed.value.path !== path) return yield* reject(path, "other-file")
 *     if (signed.value.hash !== ReadProof.hash(files.get(path)!)) return yield* reject(path, "changed")
 *     files.set(path, content)
 *     return yield* ReadProof.issue({ path, content, coverage: { _tag: "Whole" } })
 *   }),
 *   modify: (path, content) => Effect.sync(() => void files.set(path, content)),
 *   contents: (path) => Effect.sync(() => files.get(path)!),
 *   rejected: CausalLaws.proofRejected
 * }
 * const c = { names: ["a.txt", "b.txt"], before: "one", after: "two", changed: "three" } as const
 * console.log(await Effect.runPromise(RuleSet.evaluate(CausalLaws.otherFileProof(fixture, c))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const otherFileProof = (fixture: AnyFixture, c: Contents): Law.Holds =>
  Law.holds(
    "write with a proof of another file",
    Effect.gen(function* () {
      const path = yield* step("makeFile", fixture.makeFile({ name: c.names[0], content: c.before }))
      const twin = yield* step("makeFile", fixture.makeFile({ name: c.names[1], content: c.before }))
      const proof = yield* step("read", fixture.read(twin))
      return yield* finish(fixture, path, fixture.write({ path, proof, content: c.after, previous: c.before }))
    }),
    "a refusal (proof of another file) and an unchanged file",
    refused(fixture, "other-file", c.before)
  )

/**
 * The proof that allowed a write does not allow a second one: the file no
 * longer holds what it saw.
 *
 * **Example** (A careful in-memory writer)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws, RuleSet } from "@ugent/laws"
 * import { Effect, Option } from "effect"
 * const files = new Map<string, string>()
 * const reject = (path: string, reason: "never-read" | "invalid" | "other-file" | "changed") => Effect.fail(new ReadProof.ProofRejected({ path, reason }))
 * const fixture: CausalLaws.Fixture = {
 *   makeFile: ({ name, content }) => Effect.sync(() => (files.set(name, content), name)),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, proof, content }) => Effect.gen(function* () {
 *     if (proof === undefined) return yield* reject(path, "never-read")
 *     const signed = yield* ReadProof.fromToken(proof.token)
 *     if (Option.isNone(signed) || !(yield* ReadProof.isReadProof(proof))) return yield* reject(path, "invalid")
 *     if (signed.value.path !== path) return yield* reject(path, "other-file")
 *     if (signed.value.hash !== ReadProof.hash(files.get(path)!)) return yield* reject(path, "changed")
 *     files.set(path, content)
 *     return yield* ReadProof.issue({ path, content, coverage: { _tag: "Whole" } })
 *   }),
 *   modify: (path, content) => Effect.sync(() => void files.set(path, content)),
 *   contents: (path) => Effect.sync(() => files.get(path)!),
 *   rejected: CausalLaws.proofRejected
 * }
 * const c = { names: ["a.txt", "b.txt"], before: "one", after: "two", changed: "three" } as const
 * console.log(await Effect.runPromise(RuleSet.evaluate(CausalLaws.spentProof(fixture, c))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const spentProof = (fixture: AnyFixture, c: Contents): Law.Holds =>
  Law.holds(
    "second write with the same proof",
    Effect.gen(function* () {
      const path = yield* step("makeFile", fixture.makeFile({ name: c.names[0], content: c.before }))
      const proof = yield* step("read", fixture.read(path))
      yield* step("first write", fixture.write({ path, proof, content: c.after, previous: c.before }))
      return yield* finish(fixture, path, fixture.write({ path, proof, content: c.changed, previous: c.before }))
    }),
    "the second write refused (spent proof) and the first write's content intact",
    refused(fixture, "spent", c.after)
  )

/**
 * A successful write returns a fresh proof, and that proof allows the next
 * write without a re-read.
 *
 * **Example** (A writer that returns a fresh proof)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws, RuleSet } from "@ugent/laws"
 * import { Effect, Option } from "effect"
 * const files = new Map<string, string>()
 * const reject = (path: string, reason: "never-read" | "invalid" | "other-file" | "changed") => Effect.fail(new ReadProof.ProofRejected({ path, reason }))
 * const fixture: CausalLaws.Fixture = {
 *   makeFile: ({ name, content }) => Effect.sync(() => (files.set(name, content), name)),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, proof, content }) => Effect.gen(function* () {
 *     if (proof === undefined) return yield* reject(path, "never-read")
 *     const signed = yield* ReadProof.fromToken(proof.token)
 *     if (Option.isNone(signed) || !(yield* ReadProof.isReadProof(proof))) return yield* reject(path, "invalid")
 *     if (signed.value.path !== path) return yield* reject(path, "other-file")
 *     if (signed.value.hash !== ReadProof.hash(files.get(path)!)) return yield* reject(path, "changed")
 *     files.set(path, content)
 *     return yield* ReadProof.issue({ path, content, coverage: { _tag: "Whole" } })
 *   }),
 *   modify: (path, content) => Effect.sync(() => void files.set(path, content)),
 *   contents: (path) => Effect.sync(() => files.get(path)!),
 *   rejected: CausalLaws.proofRejected
 * }
 * const c = { names: ["a.txt", "b.txt"], before: "one", after: "two", changed: "three" } as const
 * console.log(await Effect.runPromise(RuleSet.evaluate(CausalLaws.chainedProof(fixture, c, (result) => result as ReadProof.ReadProof))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const chainedProof = (
  fixture: AnyFixture,
  c: Contents,
  proofOf: (result: unknown) => ReadProof.ReadProof | undefined
): Law.Holds =>
  Law.holds(
    "write with the proof a write returned",
    Effect.gen(function* () {
      const path = yield* step("makeFile", fixture.makeFile({ name: c.names[0], content: c.before }))
      const proof = yield* step("read", fixture.read(path))
      const result = yield* step("first write", fixture.write({ path, proof, content: c.after, previous: c.before }))
      const fresh = proofOf(result)
      if (fresh === undefined) {
        return yield* Effect.fail(new StepFailed("proofOf", `the first write returned no proof: ${show(result)}`))
      }
      return yield* finish(fixture, path, fixture.write({ path, proof: fresh, content: c.changed, previous: c.after }))
    }),
    "the second write succeeds and the file holds its content",
    accepted(c.changed)
  )

/**
 * Restore after write is identity on an unchanged file: a write with a fresh
 * proof, then taking it back, leaves the file with the content it had.
 *
 * **Example** (A writer that keeps what it overwrote)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalLaws, RuleSet } from "@ugent/laws"
 * import { Effect } from "effect"
 * const files = new Map<string, string>()
 * const kept: Array<[string, string]> = []
 * const fixture: CausalLaws.Fixture = {
 *   makeFile: ({ name, content }) => Effect.sync(() => (files.set(name, content), name)),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, content }) => Effect.sync(() => (kept.push([path, files.get(path)!]), files.set(path, content))),
 *   modify: (path, content) => Effect.sync(() => void files.set(path, content)),
 *   contents: (path) => Effect.sync(() => files.get(path)!),
 *   rejected: CausalLaws.proofRejected,
 *   undo: () => Effect.sync(() => { const [path, content] = kept.pop()!; files.set(path, content) })
 * }
 * const c = { names: ["a.txt", "b.txt"], before: "one", after: "two", changed: "three" } as const
 * console.log(await Effect.runPromise(RuleSet.evaluate(CausalLaws.restoreAfterWrite(fixture, c, fixture.undo!))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.3.0
 */
export const restoreAfterWrite = (
  fixture: AnyFixture,
  c: Contents,
  undo: (path: string) => Effect.Effect<unknown, unknown, unknown>
): Law.Holds =>
  Law.holds(
    "restore after write",
    Effect.gen(function* () {
      const path = yield* step("makeFile", fixture.makeFile({ name: c.names[0], content: c.before }))
      const proof = yield* step("read", fixture.read(path))
      yield* step("write", fixture.write({ path, proof, content: c.after, previous: c.before }))
      const written = yield* step("contents", fixture.contents(path))
      if (written !== c.after) {
        return yield* Effect.fail(new StepFailed("write", `the write left ${show(written)}, not ${show(c.after)}`))
      }
      return yield* finish(fixture, path, undo(path))
    }),
    "the restore succeeds and the file holds its content from before the write",
    accepted(c.before)
  )

/**
 * An approval never runs other bytes than approved: of two writes asked for
 * on files holding `before`, approved both, the one whose file is unchanged
 * then runs and leaves `after`; the one whose file a person changed to
 * `changed` in between (the agent reading it again for a fresh proof) is
 * refused as stale, and the file still holds `changed`.
 *
 * @category laws
 * @since 0.3.0
 */
export const approvedBytes = (fixture: AnyFixture, c: Contents, approvals: Approvals<unknown>): Law.Holds =>
  Law.holds(
    "approve, then run",
    Effect.gen(function* () {
      const ask = (name: string) =>
        Effect.gen(function* () {
          const path = yield* step("makeFile", fixture.makeFile({ name, content: c.before }))
          const proof = yield* step("read", fixture.read(path))
          const request: WriteRequest = { path, proof, content: c.after, previous: c.before }
          const id = yield* step("request", approvals.request(request))
          return { path, request, id }
        })
      const kept = yield* ask(c.names[0])
      const moved = yield* ask(c.names[1])
      const unchanged = yield* finish(fixture, kept.path, approvals.run(kept.id, kept.request))
      yield* step("modify", fixture.modify(moved.path, c.changed))
      const proof = yield* step("read", fixture.read(moved.path))
      const changed = yield* finish(fixture, moved.path, approvals.run(moved.id, { ...moved.request, proof }))
      return { unchanged, changed }
    }),
    "the approved write runs on the bytes it was shown, and one whose file changed since is refused, changing nothing",
    (o) => {
      const problem = setupProblem(o.exit)
      if (problem !== undefined) return problem
      const { unchanged, changed } = (o.exit as Exit.Success<{ unchanged: Outcome; changed: Outcome }>).value
      const first = accepted(c.after)({ exit: Exit.succeed(unchanged) })
      if (first !== undefined) return `on an unchanged file, ${first}`
      if (Exit.isSuccess(changed.write)) {
        return `the approval ran on other bytes: the file changed to ${show(c.changed)} and the write succeeded (${show(changed.write.value)})`
      }
      const fail = changed.write.cause.reasons.find(Cause.isFailReason)
      if (fail === undefined || !approvals.stale(fail.error)) {
        return `the write on a changed file failed with ${show(changed.write)}, which is not the refusal of a stale approval`
      }
      if (changed.contents !== c.changed) {
        return `the file changed anyway: it holds ${show(changed.contents)} instead of ${show(c.changed)}`
      }
      return undefined
    }
  )
