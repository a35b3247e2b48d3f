/**
 * What an audit log holds after `kill -9`: the entries of the calls a process
 * answered. Written behind (the default), the last ~50 ms of entries are
 * lost with the process, as the README says; with `audit: { sync: true }`
 * none is. The reader is a real process, killed by the test.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"

const child = join(import.meta.dirname, "fixtures", "auditedReads.ts")

/** Runs the reader until it has acknowledged `reads` calls, kills it, and counts what the log holds. */
const killedAfter = (mode: "sync" | "behind", reads: number) =>
  new Promise<{ readonly acknowledged: number; readonly logged: number }>((resolve, reject) => {
    const dir = mkdtempSync(join(tmpdir(), "ugent-kill-"))
    const filename = join(dir, "ugent.db")
    const reader = spawn(process.execPath, ["--conditions=@ugent/source", child, filename, mode])
    let acknowledged = 0
    let output = ""
    reader.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk
      acknowledged = (output.match(/^ack \d+$/gm) ?? []).length
      if (acknowledged >= reads) reader.kill("SIGKILL")
    })
    reader.on("error", reject)
    reader.on("exit", () => {
      try {
        const db = new DatabaseSync(filename, { readOnly: true })
        const row = db.prepare("SELECT COUNT(*) AS n FROM ugent_audit WHERE phase = 'after'").get() as { n: number }
        db.close()
        resolve({ acknowledged, logged: Number(row.n) })
      } catch (e) {
        reject(new Error(`${String(e)}\n${output}`))
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  })

describe("the audit log after kill -9", () => {
  it("with audit sync, every read the process acknowledged has its entry", { timeout: 120_000 }, async () => {
    const { acknowledged, logged } = await killedAfter("sync", 300)
    assert.isAtLeast(acknowledged, 300)
    assert.isAtLeast(logged, acknowledged)
  })

  it("written behind (the default), the log may miss the last reads, never more than it wrote", {
    timeout: 120_000
  }, async () => {
    const { acknowledged, logged } = await killedAfter("behind", 300)
    console.log(
      `written behind: ${acknowledged - logged} of ${acknowledged} acknowledged reads without an entry after kill -9`
    )
    assert.isAtMost(logged, acknowledged + 1)
  })
})
