/**
 * Fixtures for the `search.grep` tests: temporary workspaces built from a
 * description (files, directories, links), removed when the test's scope
 * closes; a runner for the tool under a chosen engine; and the rule for
 * tests that need `rg` (skip with a visible reason locally, fail under CI).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Trust } from "@ugent/core"
import { Grep, Workspace } from "@ugent/tools"
import { Effect, Exit, type Scope } from "effect"

export type Entry = string | Uint8Array | { readonly link: string } | { readonly dir: true }

export type Tree = Readonly<Record<string, Entry>>

/** Writes a tree under `root`. */
export const writeTree = (root: string, tree: Tree): void => {
  for (const [relative, entry] of Object.entries(tree)) {
    const at = join(root, relative)
    mkdirSync(dirname(at), { recursive: true })
    if (typeof entry === "string" || entry instanceof Uint8Array) writeFileSync(at, entry)
    else if ("link" in entry) symlinkSync(entry.link, at)
    else mkdirSync(at, { recursive: true })
  }
}

/** A temporary workspace root holding `tree`; removed with the scope. */
export const workspace = (tree: Tree): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = mkdtempSync(join(tmpdir(), "ugent-grep-"))
      writeTree(root, tree)
      return root
    }),
    (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
  )

export type Engine = "ripgrep" | "typescript"

/** Runs `search.grep` in `root` with an engine; the exit, failures included. */
export const grepExit = (root: string, input: Grep.Input, engine: Engine) =>
  Grep.grep
    .run(input)
    .pipe(Effect.provide([Workspace.layer({ root }), Trust.grant(0), Grep.layerEngine(engine)]), Effect.exit)

/** Runs `search.grep` and fails the test on a tool failure. */
export const grep = (root: string, input: Grep.Input, engine: Engine = "typescript") =>
  Effect.flatMap(grepExit(root, input, engine), (exit) =>
    Exit.isSuccess(exit)
      ? Effect.succeed(exit.value)
      : Effect.die(new Error(`search.grep failed: ${String(exit.cause)}`))
  )

/** Runs `search.grep` expecting a typed failure, which it returns. */
export const grepFailure = (root: string, input: Grep.Input, engine: Engine = "typescript") =>
  Grep.grep
    .run(input)
    .pipe(Effect.provide([Workspace.layer({ root }), Trust.grant(0), Grep.layerEngine(engine)]), Effect.flip)

/**
 * Whether the tests that need `rg` run. Locally without `rg` they are
 * skipped, and say so; under CI (`process.env.CI`) they run, and fail.
 */
export const rgPresent = Grep.ripgrepAvailable()
export const rgRequired = process.env.CI !== undefined && process.env.CI !== ""
export const skipWithoutRg = !rgPresent && !rgRequired
export const rgNote = skipWithoutRg ? " (skipped: rg is not on PATH; install ripgrep to run it)" : ""
if (skipWithoutRg) console.warn(`search.grep tests that compare with ripgrep are skipped${rgNote}`)

/** The engines to run a behavioural test on: both where `rg` runs, the TypeScript one otherwise. */
export const engines: ReadonlyArray<Engine> = skipWithoutRg ? ["typescript"] : ["ripgrep", "typescript"]
