/**
 * Starts an MCP server on stdio and passes its bytes through unchanged, keeping
 * a copy of every line it writes in a file, so the harness can compare what
 * the server sent with what the client passed its model.
 *
 * `node tap.ts <log file> <command> <args…>`
 */
import { spawn } from "node:child_process"
import { createWriteStream } from "node:fs"

const [log, command, ...args] = process.argv.slice(2)
if (log === undefined || command === undefined) {
  console.error("usage: node tap.ts <log file> <command> <args…>")
  process.exit(2)
}
const out = createWriteStream(log, { flags: "a" })
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] })
process.stdin.pipe(child.stdin)
child.stdout.on("data", (chunk: Buffer) => {
  out.write(chunk)
  process.stdout.write(chunk)
})
child.on("exit", (code, signal) => out.end(() => process.exit(code ?? (signal === null ? 0 : 1))))
for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, () => child.kill(s))
