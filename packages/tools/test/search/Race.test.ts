/**
 * Threat 44 for `search.grep`: a directory of the workspace swapped for a
 * link to an outside directory while the search runs. ripgrep re-resolves
 * every path it is given and every directory it walks, so whatever it reads
 * is only a candidate: the results must hold nothing from the canary
 * directory outside (neither its marker nor its file names), on both engines,
 * whether the swapped directory is the one searched, the parent of the file
 * searched, or met during the walk.
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Grep } from "@ugent/tools"
import { Effect } from "effect"
import { rounds, swapDirectory } from "../swapper.ts"
import { engines, grepExit } from "./fixture.ts"

const MARKER = `CANARY-${randomBytes(8).toString("hex")}`

/** A workspace `ws` with `dir/a.txt`, and beside it an outside canary directory with the marker in names and bytes. */
const setup = Effect.acquireRelease(
  Effect.sync(() => {
    const parent = realpathSync(mkdtempSync(join(tmpdir(), "ugent-grep-race-")))
    const root = join(parent, "ws")
    const outside = join(parent, "outside")
    mkdirSync(join(root, "dir"), { recursive: true })
    mkdirSync(outside)
    writeFileSync(join(root, "dir", "a.txt"), "needle inside\n")
    writeFileSync(join(root, "top.txt"), "needle at the top\n")
    writeFileSync(join(outside, "a.txt"), `needle ${MARKER}\n`.repeat(3))
    writeFileSync(join(outside, `leak-${MARKER}.txt`), `needle ${MARKER}\n`)
    mkdirSync(join(outside, "deeper"))
    writeFileSync(join(outside, "deeper", "b.txt"), `needle ${MARKER}\n`)
    return { parent, root, outside }
  }),
  ({ parent }) => Effect.sync(() => rmSync(parent, { recursive: true, force: true }))
)

const modes = ["files", "content", "count"] as const

const cases: ReadonlyArray<{ readonly name: string; readonly input: Omit<Grep.Input, "pattern"> }> = [
  { name: "the directory searched", input: { path: "dir" } },
  { name: "the parent of the file searched", input: { path: "dir/a.txt" } },
  { name: "a directory met during the walk", input: {} }
]

describe("threat 44: search.grep under a directory swapped for a link to the outside", () => {
  for (const engine of engines) {
    for (const c of cases) {
      it.live(
        `threat 44 (${engine} engine, ${c.name}): a directory swapped for a link while the search walks it leaks nothing`,
        () =>
          Effect.scoped(
            Effect.gen(function* () {
              const { root, outside } = yield* setup
              const race = yield* swapDirectory(join(root, "dir"), outside, { "a.txt": "needle inside\n" })
              let answered = 0
              let sawInside = 0
              let sawOther = 0
              const done = yield* rounds(
                { min: 300, maxMillis: 20_000, enough: () => sawInside > 0 && sawOther > 0 && race.swaps() >= 256 },
                (i) =>
                  Effect.gen(function* () {
                    const exit = yield* grepExit(
                      root,
                      { pattern: "needle", outputMode: modes[i % 3]!, maxMatches: 1000, ...c.input },
                      engine
                    )
                    const shown = JSON.stringify(exit)
                    assert.notInclude(shown, MARKER, `round ${i}: the canary's marker reached a result`)
                    if (exit._tag === "Success") answered++
                    // The directory inside was searched, or the search met the link (refused, or nothing under dir).
                    if (shown.includes("dir/a.txt")) sawInside++
                    else sawOther++
                  })
              )
              assert.isAtLeast(race.swaps(), 256, "the swapper must have run, or the test proves nothing")
              assert.isAbove(answered, 0, `no search answered in ${done} rounds`)
              assert.isAbove(sawInside, 0, "some searches must see the directory inside, or the test proves nothing")
              assert.isAbove(sawOther, 0, "some searches must meet the link, or the test proves nothing")
            })
          ),
        { timeout: 60_000 }
      )
    }
  }
})
