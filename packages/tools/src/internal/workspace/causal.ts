/**
 * What the writing tools share: the L1 boundary (a write outside the
 * writable globs asks for L2 through `Trust.escalate`), the checks a proof
 * must pass before bytes are replaced (genuine, for this very file, hashing
 * to the bytes on disk), and the unified diff they return.
 *
 * @internal
 */
import * as fsp from "node:fs/promises"
import { ReadProof, type ToolError, Trust } from "@ugent/core"
import { createTwoFilesPatch } from "diff"
import { Clock, Effect, Option } from "effect"
import type { ReadError, ResolvedPath, WorkspaceShape } from "../../Workspace.ts"
import type { FileTooLarge } from "./errors.ts"

/**
 * Asks for L2 (a confirmation at L2) when an L1 caller may not write the
 * path: a hook script git runs by itself, an existing executable file (an
 * overwrite keeps its mode, so the new bytes would run), or a path outside
 * the writable globs.
 */
export const requireWritable = (
  ws: WorkspaceShape,
  tool: string,
  target: ResolvedPath,
  input: unknown
): Effect.Effect<void, ToolError.TrustDenied | ToolError.ApprovalDenied> =>
  Effect.gen(function* () {
    const hook = ws.hookBy(target.relative)
    if (hook !== undefined) {
      return yield* Trust.escalate(
        tool,
        2,
        `${target.relative} is a script git runs by itself (hook rule "${hook}"), so writing it needs L2 and a confirmation`,
        input
      )
    }
    if (target.kind === "file") {
      const st = yield* Effect.option(Effect.tryPromise(() => fsp.stat(target.real)))
      if (st._tag === "Some" && (st.value.mode & 0o111) !== 0) {
        return yield* Trust.escalate(
          tool,
          2,
          `${target.relative} is executable (mode ${(st.value.mode & 0o777).toString(8)}) and keeps its mode when rewritten, so writing it needs L2 and a confirmation`,
          input
        )
      }
    }
    if (!ws.isWritable(target.relative)) {
      return yield* Trust.escalate(
        tool,
        2,
        `${target.relative} is outside the paths the workspace policy lets L1 write (${ws.policy.writable.join(", ")})`,
        input
      )
    }
  })

/** Checks that a proof is genuine and names this file of this workspace; `whole` also asks for whole-file coverage. */
export const checkProofFor = (
  ws: WorkspaceShape,
  target: ResolvedPath,
  given: ReadProof.ReadProof | undefined,
  whole: boolean
): Effect.Effect<ReadProof.ReadProof, ReadProof.ProofRejected> =>
  Effect.gen(function* () {
    if (given === undefined) return yield* new ReadProof.ProofRejected({ path: target.input, reason: "never-read" })
    // Only the signed payload is trusted: the object's own fields could have been relabelled.
    const verified = yield* ReadProof.verify(given)
    if (Option.isNone(verified)) {
      return yield* new ReadProof.ProofRejected({ path: target.input, reason: "invalid" })
    }
    const proof = verified.value
    if (proof.path !== target.relative || proof.workspace !== ReadProof.scopeOf(ws.root)) {
      return yield* new ReadProof.ProofRejected({ path: target.input, reason: "other-file" })
    }
    if (whole && proof.coverage._tag !== "Whole") {
      return yield* new ReadProof.ProofRejected({ path: target.input, reason: "partial" })
    }
    // The time bound is a second fence: a genuine proof of an unchanged file is still refused once too old.
    const now = yield* Clock.currentTimeMillis
    if (!ReadProof.isFresh(proof, now, ws.proofMaxAgeMillis)) {
      return yield* new ReadProof.ProofRejected({
        path: target.input,
        reason: "expired",
        ageMillis: now - proof.issuedAt,
        maxAgeMillis: ws.proofMaxAgeMillis
      })
    }
    return proof
  })

/**
 * Reads the bytes a proof is checked against. At most the proof's size is
 * read: a file that grew past it has changed, whatever the read limits are.
 */
export const readForProof = (
  ws: WorkspaceShape,
  target: ResolvedPath,
  proof: ReadProof.ReadProof
): Effect.Effect<Uint8Array, Exclude<ReadError, FileTooLarge> | ReadProof.ProofRejected> =>
  ws.readFile(target, { text: false, maxBytes: proof.size }).pipe(
    Effect.map((file) => file.bytes),
    Effect.catchTag("FileTooLarge", () =>
      Effect.fail(new ReadProof.ProofRejected({ path: target.input, reason: "changed" }))
    )
  )

/** Checks that the bytes on disk are those the proof saw. */
export const checkUnchanged = (
  target: ResolvedPath,
  proof: ReadProof.ReadProof,
  current: Uint8Array
): Effect.Effect<void, ReadProof.ProofRejected> =>
  ReadProof.verdict(proof, { hash: ReadProof.hash(current) }) === "unchanged"
    ? Effect.void
    : Effect.fail(new ReadProof.ProofRejected({ path: target.input, reason: "changed" }))

/** Issues the proof of content just shown or written: the file's workspace-relative path and the workspace's fingerprint. */
export const issueFor = (
  ws: WorkspaceShape,
  target: ResolvedPath,
  content: Uint8Array | string,
  coverage: ReadProof.Coverage
): Effect.Effect<ReadProof.ReadProof> =>
  ReadProof.issue({ path: target.relative, workspace: ReadProof.scopeOf(ws.root), content, coverage })

/** A unified diff between two versions of a file (`before` undefined: the file is new). */
export const unifiedDiff = (relative: string, before: string | undefined, after: string): string =>
  createTwoFilesPatch(
    before === undefined ? "/dev/null" : `a/${relative}`,
    `b/${relative}`,
    before ?? "",
    after,
    undefined,
    undefined,
    { context: 3 }
  )

/** Decodes bytes read as UTF-8 text (validity was checked by the read). */
export const decode = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")
