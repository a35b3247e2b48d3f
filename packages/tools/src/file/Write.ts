/**
 * `file.write` creates a file, or replaces one the caller has read whole. A
 * create is exclusive (it fails if the file exists) and needs no proof; a
 * replace needs a `ReadProof` of that very file covering all of it, and
 * succeeds only if the bytes on disk still hash to it. The write is atomic
 * (a temporary file in the same directory, then a rename), returns a unified
 * diff and a fresh proof, and is announced on the `Changes` hub.
 *
 * @since 0.1.0
 */
import { Changes, ReadProof, Tool, ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import {
  checkProofFor,
  checkUnchanged,
  decode,
  issueFor,
  readForProof,
  requireWritable,
  unifiedDiff
} from "../internal/workspace/causal.ts"
import * as Checkpoints from "../Checkpoints.ts"
import * as StateDir from "../StateDir.ts"
import * as Workspace from "../Workspace.ts"

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  path: Schema.String.annotate({ description: "File path, relative to the workspace root (or absolute inside it)." }),
  content: Schema.String.annotate({ description: "The complete new content of the file." }),
  proof: Schema.optionalKey(
    ReadProof.ReadProofFromToken.annotate({
      description:
        "To overwrite: the proof token a whole-file read returned. In a session that keeps state (MCP) the server supplies it when left out."
    })
  )
})

/**
 * @category schemas
 * @since 0.1.0
 */
export const Output = Schema.Struct({
  /** Path relative to the workspace root. */
  path: Schema.String,
  /** Whether the file was created (else replaced). */
  created: Schema.Boolean,
  /** Bytes written. */
  bytes: Schema.Int,
  /** Unified diff from the old content (or /dev/null) to the new. */
  diff: Schema.String,
  /** A proof of the new content, whole: chain an edit without reading again. */
  proof: ReadProof.ReadProofFromToken
})

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `file.write` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Union([
  ToolError.TrustDenied,
  ToolError.ApprovalDenied,
  ReadProof.ProofRejected,
  Workspace.AlreadyExists,
  ...Workspace.pathErrors,
  Workspace.ConcurrentChange,
  Workspace.BinaryFile,
  Workspace.FileTooLarge,
  Checkpoints.CheckpointRefused,
  StateDir.StateRefused,
  Workspace.ChangedSinceApproval
])

/**
 * Creates or replaces a file. Missing parent directories are created (each
 * inside the workspace). Inside the policy's writable globs it needs L1;
 * elsewhere it escalates to L2 (each such write confirmed).
 *
 * **Example** (Create, then replace with the returned proof)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { Workspace, Write } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "write-"))
 * const program = Effect.gen(function* () {
 *   const first = yield* Write.write.run({ path: "notes/todo.md", content: "- tea\n" })
 *   const second = yield* Write.write.run({ path: "notes/todo.md", content: "- tea\n- cake\n", proof: first.proof })
 *   return [first.created, second.created, second.diff.split("\n").slice(-3).join("|")]
 * })
 * console.log(await Effect.runPromise(program.pipe(Effect.provide([Workspace.layer({ root }), Trust.grant(1)]))))
 * // => [ true, false, ' - tea|+- cake|' ]
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const write = Tool.make({
  name: "file.write",
  description:
    "Create a file, or replace one you have read whole (pass the proof file.read returned). Creating fails if the file exists. Returns a diff and a fresh proof.",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 1,
  effects: { readsFs: true, writesFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const ws = yield* Workspace.Workspace
      const target = yield* ws.resolveForWrite(input.path)
      yield* requireWritable(ws, "file.write", target, input)
      const bytes = Buffer.from(input.content, "utf8")
      let before: string | undefined
      let written: Workspace.ResolvedPath
      if (target.kind === "missing") {
        if (input.proof !== undefined) {
          // A proof of this path means the caller read a file that is gone since.
          const proof = yield* checkProofFor(ws, target, input.proof, false)
          return yield* new ReadProof.ProofRejected({
            path: input.path,
            reason: proof.path === target.relative ? "deleted" : "other-file"
          })
        }
        written = yield* ws.writeFile(target, bytes, { mode: "create" })
      } else {
        const proof = yield* checkProofFor(ws, target, input.proof, true)
        const current = yield* readForProof(ws, target, proof)
        yield* checkUnchanged(target, proof, current)
        before = decode(current)
        written = yield* ws.writeFile(target, bytes, { mode: "replace", expectedHash: proof.hash })
      }
      const proof = yield* issueFor(ws, written, bytes, { _tag: "Whole" })
      yield* Changes.publish({
        path: written.real,
        relative: written.relative,
        kind: before === undefined ? "created" : "modified"
      })
      return {
        path: written.relative,
        created: before === undefined,
        bytes: bytes.length,
        diff: unifiedDiff(written.relative, before, input.content),
        proof
      }
    })
})
