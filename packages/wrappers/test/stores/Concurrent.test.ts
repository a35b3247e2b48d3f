import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const run = promisify(execFile)
const child = join(import.meta.dirname, "fixtures", "migrateAt.ts")

describe("SQLite stores opened by several processes at once", () => {
  // Editors and CLI calls start ugent processes on one workspace together; the
  // first start of each must migrate the fresh database without "database is locked".
  it("every process migrates and writes, in every round", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "ugent-concurrent-"))
    try {
      for (let round = 0; round < 2; round++) {
        const filename = join(dir, `round-${round}.db`)
        const startAt = Date.now() + 2500
        const outputs = await Promise.all(
          Array.from({ length: 6 }, () =>
            run(process.execPath, ["--conditions=@ugent/source", child, filename, String(startAt)]).then((r) =>
              r.stdout.trim()
            )
          )
        )
        assert.deepStrictEqual(outputs, Array(6).fill("ok"), `round ${round}`)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
