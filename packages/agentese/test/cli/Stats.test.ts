/**
 * `ugent stats` and `self.tools.stats` through the CLI: the persona × tool
 * table and failures grouped by error for the operator, a caller's own
 * figures for the caller.
 */
import { assert, describe, it } from "@effect/vitest"
import { onlyJson, ugent, workspace } from "./fixture.ts"

describe("ugent stats", () => {
  it("shows each caller's calls of each path and the failures grouped by error; self.tools.stats shows a caller its own", async () => {
    const root = workspace()
    const call = (observer: string, path: string, input: unknown) =>
      ugent(["invoke", path, "--input", JSON.stringify(input), "--observer", observer, "--json"], { cwd: root })
    assert.strictEqual((await call("alice", "world.tools.file.read", { path: "a.txt" })).code, 0)
    assert.strictEqual((await call("alice", "world.tools.file.read", { path: "b.md" })).code, 0)
    assert.notStrictEqual((await call("bob", "world.tools.file.read", { path: "missing.txt" })).code, 0)
    assert.notStrictEqual((await call("bob", "world.tools.file.write", { path: "c.txt", content: "x" })).code, 0)

    const text = await ugent(["stats", "--since", "all"], { cwd: root })
    assert.strictEqual(text.code, 0, text.stderr)
    assert.match(text.stdout, /By caller and path:\n {2}alice +world\.tools\.file\.read +2 calls +2 ok/)
    assert.match(text.stdout, /bob +world\.tools\.file\.write +1 calls +0 ok +1 refused/)
    assert.match(text.stdout, /Failures by error:\n(.*\n)* {2}NotFound +not_found +1/)
    assert.match(text.stdout, /TrustDenied +denied +1/)
    // The audit's summaries are sentences, with their token estimate.
    assert.match(
      text.stdout,
      /Recent calls:\n(.*\n)*.* alice +world\.tools\.file\.read +\{"path":"a\.txt"\} +→ Read 2 lines from a\.txt \(lines 1-2 of 2\) \(~\d+ tokens\)/
    )

    const json = onlyJson(await ugent(["stats", "--since", "all", "--json"], { cwd: root })) as {
      byObserverTool: Array<{ observerId: string; path: string; calls: number }>
      failures: Array<{ reason: string; kind: string; count: number }>
    }
    assert.deepStrictEqual(
      json.byObserverTool.map((r) => [r.observerId, r.path, r.calls]),
      [
        ["alice", "world.tools.file.read", 2],
        ["bob", "world.tools.file.read", 1],
        ["bob", "world.tools.file.write", 1]
      ]
    )
    assert.deepStrictEqual(
      json.failures.map((f) => [f.reason, f.kind, f.count]),
      [
        ["NotFound", "not_found", 1],
        ["TrustDenied", "denied", 1]
      ]
    )

    // bob's own figures, and none of alice's.
    const own = onlyJson(await call("bob", "self.tools.stats", {})) as {
      result: {
        observerId: string
        calls: number
        failuresByError: Array<{ reason: string }>
        recentErrors: Array<{ path: string; error: string; message: string }>
        byTool: Array<{ path: string }>
      }
    }
    assert.strictEqual(own.result.observerId, "bob")
    assert.strictEqual(own.result.calls, 2)
    assert.deepStrictEqual(
      own.result.byTool.map((t) => t.path),
      ["world.tools.file.read", "world.tools.file.write"]
    )
    assert.deepStrictEqual(
      own.result.recentErrors.map((e) => e.error),
      ["TrustDenied", "NotFound"]
    )
    assert.match(own.result.recentErrors[1]!.message, /missing\.txt/)
  })
})
