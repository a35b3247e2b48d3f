/**
 * Threat 45 for `search.grep`: FIFOs where ignore files are read. ripgrep
 * opens `.gitignore`, `.ignore` and `.rgignore` with a blocking `open`, so a
 * FIFO there held it (and the call) until the call timed out. An ignore file
 * that is not a regular file is skipped on both engines, and the search
 * answers at once. A releaser opens the FIFOs' writing end after a few
 * seconds, so code that blocks fails the timing instead of hanging the run.
 */
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { mkfifo, releaser } from "../fifo.ts"
import { watched } from "../loop.ts"
import { engines, grepExit, workspace } from "./fixture.ts"

describe("threat 45: search.grep and FIFOs planted as ignore files", () => {
  for (const engine of engines) {
    it.live(`threat 45 (${engine} engine): a FIFO .gitignore, .ignore or .rgignore blocks nothing and is skipped`, () =>
      Effect.gen(function* () {
        const root = yield* workspace({
          "a.txt": "needle\n",
          "d/b.txt": "needle\n",
          "e/c.txt": "needle\n",
          "f/g/h.txt": "needle\n"
        })
        const fifos = [join(root, "d", ".gitignore"), join(root, ".ignore"), join(root, "f", ".rgignore")]
        for (const f of fifos) mkfifo(f)
        yield* releaser(fifos, 8000)
        for (const outputMode of ["files", "content", "count"] as const) {
          const call = yield* watched(grepExit(root, { pattern: "needle", outputMode }, engine))
          assert.isBelow(call.millis, 4000, `${outputMode}: the search must answer at once, not wait on a FIFO`)
          assert.isBelow(call.maxPause, 2000, `${outputMode}: the event loop must keep running`)
          // `grepExit` succeeds with the tool's own exit.
          const exit = Exit.isSuccess(call.exit) ? call.exit.value : assert.fail(String(call.exit))
          if (Exit.isFailure(exit)) return assert.fail(`${outputMode}: ${String(exit.cause)}`)
          if (exit.value.mode === "files") {
            assert.deepStrictEqual(exit.value.files, ["a.txt", "d/b.txt", "e/c.txt", "f/g/h.txt"])
          }
        }
      })
    )
  }
})
