import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Invoke, Server } from "@ugent/agentese"
import { Effect, Layer } from "effect"
const n = Number(process.argv[2] ?? 100)
const root = mkdtempSync(join(tmpdir(), "cg-"))
writeFileSync(join(root, "a.txt"), Array.from({ length: 2000 }, (_, i) => `line ${i}`).join("\n"))
const layer = Server.layer({ root, stores: "memory" })
const program = Effect.gen(function* () {
  for (let i = 0; i < n; i++) {
    const o = yield* Invoke.invoke({ path: "world.tools.file.read", input: { path: "a.txt", offset: i + 1, limit: 1 } })
    if (!o.ok) throw new Error(JSON.stringify(o))
  }
})
await Effect.runPromise(Effect.scoped(Effect.flatMap(Layer.build(layer), (ctx) => Effect.provideContext(program, ctx))))
console.log("done", n)
