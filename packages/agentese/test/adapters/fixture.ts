/**
 * What the adapter tests share: a temporary workspace, a server runtime over
 * it (memory stores, so its audit records can be read back), the caller's
 * offers as the road lists them, and the audit records of a path.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Catalog, Invoke, Server } from "@ugent/agentese"
import { AuditStore } from "@ugent/wrappers"
import { Effect, ManagedRuntime } from "effect"
import { afterEach } from "vitest"

const made: Array<string> = []
const runtimes: Array<ManagedRuntime.ManagedRuntime<unknown, unknown>> = []

afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.dispose()
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A temporary workspace with files, removed after the test. */
export const workspace = (files: Readonly<Record<string, string>> = {}): string => {
  const root = mkdtempSync(join(tmpdir(), "ugent-adapters-"))
  made.push(root)
  for (const [name, content] of Object.entries(files)) writeFileSync(join(root, name), content)
  return root
}

/** A server runtime over a workspace (memory stores, roomy limits), disposed after the test. */
export const runtime = (root: string, options: Partial<Server.Options> = {}) => {
  const made = ManagedRuntime.make(
    Server.layer({
      root,
      stores: "memory",
      observerId: "adapter-test",
      recipe: { rateLimits: { perMinute: 600 } },
      ...options
    })
  )
  runtimes.push(made as ManagedRuntime.ManagedRuntime<unknown, unknown>)
  return made
}

type Runtime = ReturnType<typeof runtime>

/** The provider names of what the road offers the runtime's caller, in path order. */
export const offeredNames = (rt: Runtime): Promise<Array<string>> =>
  rt.runPromise(
    Effect.map(
      Effect.flatMap(Invoke.Invoker, (road) => road.list),
      (offers) => offers.map((o) => Catalog.toolName(o.path))
    )
  )

/** The audit records of a path, newest first. */
export const audited = (rt: Runtime, path: string) =>
  rt.runPromise(Effect.flatMap(AuditStore.AuditStore, (audit) => audit.list({ path, limit: 50 })))
