/**
 * `file.edit` replaces exact text in a file the caller has read. Each edit
 * names an `oldText` that must occur exactly once (or every occurrence, with
 * `replaceAll`) and its `newText`; several edits apply in order, all or
 * nothing. Nothing is fuzzy: a text that differs only in whitespace is
 * reported as a hint and never applied, and replacements are inserted
 * literally (`$&`, `$$`, `` $` ``, `$'` mean themselves). The proof must hash
 * to the bytes on disk and cover the lines each edit touches.
 *
 * @since 0.1.0
 */
import { isUtf8 } from "node:buffer"
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
import { lineAt, lineEndings, newlines } from "../internal/workspace/text.ts"
import * as Checkpoints from "../Checkpoints.ts"
import * as StateDir from "../StateDir.ts"
import * as Workspace from "../Workspace.ts"

/**
 * One replacement.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Replacement = Schema.Struct({
  oldText: Schema.String.annotate({
    description: "The exact text to replace, as the file has it (without file.read's line-number prefixes)."
  }),
  newText: Schema.String.annotate({ description: "The text to put in its place, inserted literally." }),
  replaceAll: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Replace every occurrence instead of requiring exactly one." })
  )
})

/**
 * @category models
 * @since 0.1.0
 */
export type Replacement = typeof Replacement.Type

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  path: Schema.String.annotate({ description: "File path, relative to the workspace root (or absolute inside it)." }),
  proof: Schema.optionalKey(
    ReadProof.ReadProofFromToken.annotate({
      description:
        "The proof token a read of this file returned. In a session that keeps state (MCP) the server supplies it when left out."
    })
  ),
  edits: Schema.optionalKey(
    Schema.Array(Replacement).annotate({ description: "Edits applied in order, all or nothing." })
  ),
  oldText: Schema.optionalKey(Schema.String.annotate({ description: "Single-edit form: the exact text to replace." })),
  newText: Schema.optionalKey(Schema.String.annotate({ description: "Single-edit form: its replacement." })),
  replaceAll: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Single-edit form: replace every occurrence." })
  ),
  dryRun: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Return the diff without writing (the proof stays valid)." })
  )
})

/**
 * @category schemas
 * @since 0.1.0
 */
export const Output = Schema.Struct({
  /** Path relative to the workspace root. */
  path: Schema.String,
  /** Unified diff of the change. */
  diff: Schema.String,
  /** Occurrences replaced, over all edits. */
  replacements: Schema.Int,
  dryRun: Schema.Boolean,
  /** A proof of the new content, covering what the old one covered, moved by the lines added (absent on a dry run: the old proof still holds). */
  proof: Schema.optionalKey(ReadProof.ReadProofFromToken)
})

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Why an edit could not be applied. `edit` is its 1-based position in the
 * list; no edit of the call was applied.
 *
 * @category errors
 * @since 0.1.0
 */
export class EditFailed extends Schema.TaggedError<EditFailed>()("EditFailed", {
  path: Schema.String,
  edit: Schema.Int,
  of: Schema.Int,
  reason: Schema.Literals(["not-found", "ambiguous", "no-change", "empty-old-text"]),
  matches: Schema.Int,
  hint: Schema.optionalKey(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "conflict"
  override get message(): string {
    const which = this.of > 1 ? `Edit ${this.edit} of ${this.of}` : "The edit"
    const none = " No edit was applied."
    const messages: Record<typeof this.reason, string> = {
      "not-found": `${which}: oldText was not found in ${this.path}. ${this.hint ?? "Copy the exact text from file.read's output, without the line-number prefix, and retry."}${none}`,
      ambiguous: `${which}: oldText occurs ${this.matches} times in ${this.path}. Include more surrounding lines to make it unique, or set replaceAll: true to replace every occurrence.${none}`,
      "no-change": `${which}: oldText and newText are identical, so it would change nothing. Give the new text.${none}`,
      "empty-old-text": `${which}: oldText is empty. Give the exact text to replace; to insert, include a neighbouring line in both oldText and newText.${none}`
    }
    return messages[this.reason]
  }
}

/**
 * Everything `file.edit` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Union([
  EditFailed,
  ToolError.InvalidInput,
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

/** Start indices of every occurrence, overlapping ones included (they make a single edit ambiguous). */
const occurrences = (text: string, needle: string): Array<number> => {
  const found: Array<number> = []
  let i = text.indexOf(needle)
  while (i !== -1) {
    found.push(i)
    i = text.indexOf(needle, i + 1)
  }
  return found
}

/** Replaces every non-overlapping occurrence, left to right, literally. */
const replaceEvery = (text: string, needle: string, replacement: string): { text: string; count: number } => {
  const parts = text.split(needle)
  return { text: parts.join(replacement), count: parts.length - 1 }
}

const squeeze = (s: string) => s.replace(/\s+/g, " ").trim()

/** A hint for a text that is absent: a whitespace-only variant, or pasted line numbers. */
const nearMiss = (text: string, oldText: string): string | undefined => {
  const lines = oldText.split("\n").filter((l) => l.trim() !== "")
  if (lines.length > 0 && lines.every((l) => /^\s*\d+\t/.test(l))) {
    return "oldText seems to include file.read's line-number prefixes (like `12<TAB>`); remove them and retry."
  }
  const target = squeeze(oldText)
  if (target === "") return undefined
  // Map the squeezed text back to the original to report a line number.
  const index: Array<number> = []
  let squeezed = ""
  let inSpace = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (/\s/.test(ch)) {
      inSpace = true
      continue
    }
    if (inSpace && squeezed !== "") {
      squeezed += " "
      index.push(i)
    }
    inSpace = false
    squeezed += ch
    index.push(i)
  }
  const at = squeezed.indexOf(target)
  if (at === -1) return undefined
  const startIndex = index[at]!
  const endIndex = index[at + target.length - 1]! + 1
  const line = lineAt(text, startIndex)
  const actual = text.slice(startIndex, endIndex)
  const shown = actual.length > 240 ? `${actual.slice(0, 240)}…` : actual
  return `A variant that differs only in whitespace (spaces, tabs or line endings) is at line ${line}: ${JSON.stringify(shown)}. It was not applied: copy that text exactly and retry.`
}

interface Applied {
  readonly text: string
  readonly replacements: number
  /** Lines added (or, negative, removed) by all edits. */
  readonly shift: number
}

/**
 * Applies the edits in order to `text`, checking each against the proof's
 * coverage. Line numbers of later edits are mapped back to the read the
 * proof records: edits inside the covered range shift its end by the lines
 * they add or remove.
 */
const applyAll = (
  path: string,
  original: string,
  edits: ReadonlyArray<Replacement>,
  proof: ReadProof.ReadProof
): Effect.Effect<Applied, EditFailed | ReadProof.ProofRejected> =>
  Effect.gen(function* () {
    const crlf = lineEndings(original) === "crlf"
    let text = original
    let replacements = 0
    let shift = 0
    for (const [i, edit] of edits.entries()) {
      const fail = (reason: EditFailed["reason"], matches: number, hint?: string) =>
        new EditFailed({
          path,
          edit: i + 1,
          of: edits.length,
          reason,
          matches,
          ...(hint === undefined ? {} : { hint })
        })
      if (edit.oldText === "") return yield* fail("empty-old-text", 0)
      if (edit.oldText === edit.newText) return yield* fail("no-change", 0)
      let oldText = edit.oldText
      let newText = edit.newText
      let found = occurrences(text, oldText)
      // file.read hides the \r of CRLF files; text copied from it is translated back, exactly.
      if (found.length === 0 && crlf && oldText.includes("\n") && !oldText.includes("\r") && !newText.includes("\r")) {
        const translated = occurrences(text, oldText.replaceAll("\n", "\r\n"))
        if (translated.length > 0) {
          oldText = oldText.replaceAll("\n", "\r\n")
          newText = newText.replaceAll("\n", "\r\n")
          found = translated
        }
      }
      if (found.length === 0) return yield* fail("not-found", 0, nearMiss(text, edit.oldText))
      if (found.length > 1 && edit.replaceAll !== true) return yield* fail("ambiguous", found.length)
      for (const at of found) {
        const start = lineAt(text, at)
        const end = start + newlines(text.slice(at, at + oldText.length - 1))
        if (!ReadProof.covers(proof, start, end - shift)) {
          return yield* new ReadProof.ProofRejected({ path, reason: "not-covering" })
        }
      }
      const delta = newlines(newText) - newlines(oldText)
      if (edit.replaceAll === true) {
        const result = replaceEvery(text, oldText, newText)
        text = result.text
        replacements += result.count
        shift += delta * result.count
      } else {
        const at = found[0]!
        text = text.slice(0, at) + newText + text.slice(at + oldText.length)
        replacements += 1
        shift += delta
      }
    }
    return { text, replacements, shift }
  })

/**
 * Replaces exact text in a file, with a proof of a read that covers it.
 *
 * **Example** (A literal replacement, then a dry run)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { Edit, Read, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "edit-"))
 * writeFileSync(join(root, "price.txt"), "price: 10\n")
 * const program = Effect.gen(function* () {
 *   const { proof } = yield* Read.read.run({ path: "price.txt" })
 *   const edited = yield* Edit.edit.run({ path: "price.txt", proof, oldText: "10", newText: "$& + $$5" })
 *   const dry = yield* Edit.edit.run({ path: "price.txt", proof: edited.proof!, oldText: "price", newText: "cost", dryRun: true })
 *   return [edited.replacements, dry.dryRun, dry.proof === undefined]
 * })
 * console.log(await Effect.runPromise(program.pipe(Effect.provide([Workspace.layer({ root }), Trust.grant(1)]))))
 * // => [ 1, true, true ]
 * console.log(readFileSync(join(root, "price.txt"), "utf8").trimEnd())
 * // => price: $& + $$5
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const edit = Tool.make({
  name: "file.edit",
  description:
    "Replace exact text in a file you have read (pass the proof). oldText must match exactly and be unique unless replaceAll; several edits apply in order, all or nothing; dryRun shows the diff only.",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 1,
  effects: { readsFs: true, writesFs: true, idempotent: false },
  run: (input) =>
    Effect.gen(function* () {
      const single = input.oldText !== undefined || input.newText !== undefined || input.replaceAll !== undefined
      if (
        single === (input.edits !== undefined) ||
        (single && (input.oldText === undefined || input.newText === undefined))
      ) {
        return yield* new ToolError.InvalidInput({
          tool: "file.edit",
          issues:
            "give either edits: [{ oldText, newText, replaceAll? }, …] or a single oldText and newText (with replaceAll?), not both and not neither"
        })
      }
      const edits: ReadonlyArray<Replacement> = single
        ? [
            {
              oldText: input.oldText!,
              newText: input.newText!,
              ...(input.replaceAll === undefined ? {} : { replaceAll: input.replaceAll })
            }
          ]
        : input.edits!
      if (edits.length === 0) {
        return yield* new ToolError.InvalidInput({
          tool: "file.edit",
          issues: "edits is empty: give at least one edit"
        })
      }
      const ws = yield* Workspace.Workspace
      const target = yield* ws.resolveForWrite(input.path)
      yield* requireWritable(ws, "file.edit", target, input)
      const proof = yield* checkProofFor(ws, target, input.proof, false)
      if (target.kind === "missing") return yield* new ReadProof.ProofRejected({ path: input.path, reason: "deleted" })
      const current = yield* readForProof(ws, target, proof)
      yield* checkUnchanged(target, proof, current)
      // Proofs of file.read are of UTF-8 text; one of other bytes cannot be edited as text.
      if (!isUtf8(current)) {
        return yield* new Workspace.BinaryFile({ path: input.path, size: current.length, reason: "invalid-utf8" })
      }
      const before = decode(current)
      const applied = yield* applyAll(input.path, before, edits, proof)
      const diff = unifiedDiff(target.relative, before, applied.text)
      if (input.dryRun === true) {
        const preview: Output = { path: target.relative, diff, replacements: applied.replacements, dryRun: true }
        return preview
      }
      const bytes = Buffer.from(applied.text, "utf8")
      const written = yield* ws.writeFile(target, bytes, { mode: "replace", expectedHash: proof.hash })
      // The caller has seen what it read plus what it wrote: the covered range, moved by the lines added.
      const coverage: ReadProof.Coverage =
        proof.coverage._tag === "Whole"
          ? proof.coverage
          : { _tag: "Lines", start: proof.coverage.start, end: proof.coverage.end + applied.shift }
      const fresh = yield* issueFor(ws, written, bytes, coverage)
      yield* Changes.publish({ path: written.real, relative: written.relative, kind: "modified" })
      const result: Output = {
        path: written.relative,
        diff,
        replacements: applied.replacements,
        dryRun: false,
        proof: fresh
      }
      return result
    })
})
