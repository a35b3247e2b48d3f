import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Events, Invoke, type Recipe, Server } from "@ugent/agentese"
import { Observer, type Trust } from "@ugent/core"
import { AuditStore, MemoryStore } from "@ugent/wrappers"
import { Effect, Fiber, Ref, Schema, Stream } from "effect"

const workspace = () => {
  const root = mkdtempSync(join(tmpdir(), "ugent-invoke-"))
  writeFileSync(join(root, "a.txt"), "alpha\nbeta\n")
  writeFileSync(join(root, "b.md"), "# b\n")
  return root
}

const run = <A, E>(
  options: Omit<Server.Options, "root"> & { readonly root?: string },
  effect: Effect.Effect<A, E, Server.Services>
) => {
  const root = options.root ?? workspace()
  return effect.pipe(
    Effect.provide(Server.layer({ stores: "memory", ...options, root })),
    Effect.ensuring(Effect.sync(() => options.root === undefined && rmSync(root, { recursive: true, force: true })))
  )
}

const invoke = (path: string, input: unknown) => Invoke.invoke({ path, input })
const errorTag = (o: Invoke.Outcome) => (o.ok ? "ok" : o.error._tag)

describe("Invoke", () => {
  it.effect("a read goes through and returns encoded JSON with a proof token", () =>
    run(
      { trust: 0 },
      Effect.gen(function* () {
        const o = yield* invoke("world.tools.file.read", { path: "a.txt" })
        assert.isTrue(o.ok)
        const result = (o as { result: { content: string; proof: string } }).result
        assert.strictEqual(result.content, "1\talpha\n2\tbeta")
        assert.match(result.proof, /^rp1\./)
      })
    )
  )

  it.effect("unknown paths are not_found with suggestions", () =>
    run(
      {},
      Effect.gen(function* () {
        const o = yield* invoke("world.tools.file.raed", { path: "a.txt" })
        assert.isFalse(o.ok)
        assert.strictEqual(!o.ok && o.kind, "not_found")
        assert.match(!o.ok ? o.error.message : "", /Did you mean world\.tools\.file\.read/)
      })
    )
  )

  it.effect("bad input is invalid_input naming the field", () =>
    run(
      {},
      Effect.gen(function* () {
        const o = yield* invoke("world.tools.file.read", { path: 3 })
        assert.strictEqual(!o.ok && o.kind, "invalid_input")
        assert.match(!o.ok ? o.error.message : "", /path/)
      })
    )
  )

  it.effect("read then write with the proof token, at L1", () =>
    Effect.gen(function* () {
      const root = workspace()
      yield* run(
        { root, trust: 1 },
        Effect.gen(function* () {
          const read = yield* invoke("world.tools.file.read", { path: "a.txt" })
          const proof = (read as { result: { proof: string } }).result.proof
          const write = yield* invoke("world.tools.file.write", { path: "a.txt", content: "new\n", proof })
          assert.isTrue(write.ok, JSON.stringify(write))
          const stale = yield* invoke("world.tools.file.write", { path: "a.txt", content: "again\n", proof })
          assert.strictEqual(errorTag(stale), "ProofRejected")
        })
      )
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "new\n")
      rmSync(root, { recursive: true, force: true })
    })
  )

  it.effect("a pipeline feeds each step's output to the next, and a mismatch names both paths", () =>
    run(
      {},
      Effect.gen(function* () {
        const o = yield* Invoke.invoke({
          path: "world.tools.file.glob >> world.tools.file.read",
          input: { pattern: "*.txt" }
        })
        assert.strictEqual(errorTag(o), "PipelineMismatch")
        assert.match(
          !o.ok ? o.error.message : "",
          /world\.tools\.file\.glob does not fit the input of world\.tools\.file\.read/
        )
      })
    )
  )

  it.effect("threat: unknown arguments are ignored, so {path, from, to} returns the whole file", () =>
    run(
      {},
      Effect.gen(function* () {
        const o = yield* invoke("world.tools.file.read", { path: "a.txt", from: 1, to: 2 })
        assert.strictEqual(errorTag(o), "UnknownArguments")
        assert.strictEqual(!o.ok && o.kind, "invalid_input")
        assert.include(!o.ok ? o.error.message : "", "file.read takes path, offset, limit, startLine, endLine")
        assert.include(!o.ok ? o.error.message : "", "Did you mean startLine (for from), endLine (for to)?")
        // A step's own arguments are the caller's too: the first step's, and a later step's.
        const first = yield* Invoke.invoke({ path: "world.tools.file.read --from=1", input: { path: "a.txt" } })
        assert.strictEqual(errorTag(first), "UnknownArguments")
        const later = yield* Invoke.invoke({
          path: "world.tools.file.read >> world.tools.file.edit --oldText=alpha --newText=ALPHA --dryrun=true",
          input: { path: "a.txt" }
        }).pipe(Effect.provide(Observer.layer({ id: "writer", trust: 1 })))
        assert.strictEqual(errorTag(later), "UnknownArguments")
        assert.include(!later.ok ? later.error.message : "", "Did you mean dryRun (for dryrun)?")
      })
    )
  )

  it.effect("a later pipeline step takes the previous output's keys it knows and drops the rest", () =>
    Effect.gen(function* () {
      const root = workspace()
      yield* run(
        { root, trust: 1 },
        Effect.gen(function* () {
          // file.read's output (content, proof, totalLines, …) feeds file.edit, whose input has none of its other keys.
          const o = yield* Invoke.invoke({
            path: "world.tools.file.read >> world.tools.file.edit --oldText=alpha --newText=ALPHA",
            input: { path: "a.txt" }
          })
          assert.isTrue(o.ok, JSON.stringify(o))
        })
      )
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "ALPHA\nbeta\n")
      rmSync(root, { recursive: true, force: true })
    })
  )

  it.effect("git tools are on world.tools.git.*", () =>
    Effect.gen(function* () {
      const root = workspace()
      const git = (...args: Array<string>) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-C", root, ...args], { stdio: "pipe" })
      git("init", "-q", "-b", "main")
      git("add", ".")
      git("commit", "-q", "-m", "first commit")
      yield* run(
        { root },
        Effect.gen(function* () {
          const log = yield* invoke("world.tools.git.log", { limit: 5 })
          assert.isTrue(log.ok, JSON.stringify(log))
          const commits = (log as { result: { commits: ReadonlyArray<{ message: string }> } }).result.commits
          assert.deepStrictEqual(
            commits.map((c) => c.message.trim()),
            ["first commit"]
          )
          const status = yield* invoke("world.tools.git.status", {})
          assert.isTrue(status.ok, JSON.stringify(status))
          assert.strictEqual(
            errorTag(yield* invoke("world.tools.git.show", { rev: "--output=/tmp/x" })),
            "InvalidRevision"
          )
        })
      )
      rmSync(root, { recursive: true, force: true })
    })
  )

  it.effect("the server's global limits replace the defaults", () =>
    run(
      { globalLimits: [{ limit: 2, window: "1 minute" }], recipe: { rateLimits: { perMinute: 1000 } } },
      Effect.gen(function* () {
        const outcomes = [
          yield* invoke("world.tools.file.read", { path: "a.txt" }),
          yield* invoke("world.tools.file.read", { path: "b.md" }),
          yield* invoke("world.tools.file.list", {})
        ]
        assert.deepStrictEqual(outcomes.map(errorTag), ["ok", "ok", "RateLimited"])
        assert.strictEqual(!outcomes[2]!.ok && outcomes[2]!.error.scope, "global")
      })
    )
  )

  it.effect("the .ugent state directory is blocked for every tool", () =>
    run(
      { trust: 3 },
      Effect.gen(function* () {
        assert.strictEqual(
          errorTag(yield* invoke("world.tools.file.write", { path: ".ugent/x.txt", content: "x" })),
          "BlockedPath"
        )
      })
    )
  )

  it.effect("self.memory.read serves the working memory of Summarized", () =>
    run(
      {},
      Effect.gen(function* () {
        const memory = yield* MemoryStore.MemoryStore
        const id = yield* memory.put({ tool: "search.grep", content: "line 1\nline 2\nline 3", summary: "3 lines" })
        const whole = yield* invoke("self.memory.read", { id })
        assert.isTrue(whole.ok, JSON.stringify(whole))
        assert.include(JSON.stringify(whole), "line 3")
        const missing = yield* invoke("self.memory.read", { id: "no-such-id" })
        assert.strictEqual(errorTag(missing), "MemoryNotFound")
      })
    )
  )

  describe("gates (threats 25-30)", () => {
    it.effect("a denied path is neither listed, described nor callable", () =>
      run(
        { trust: 3, recipe: { deny: ["world.tools.file.write", "world.tools.search.*"] } },
        Effect.gen(function* () {
          const road = yield* Invoke.Invoker
          const listed = (yield* road.list).map((o) => o.path)
          assert.notInclude(listed, "world.tools.file.write")
          assert.notInclude(listed, "world.tools.search.grep")
          assert.include(listed, "world.tools.file.read")
          assert.strictEqual((yield* Effect.flip(road.describe("world.tools.file.write")))._tag, "UnknownPath")
          const o = yield* invoke("world.tools.search.grep", { pattern: "a" })
          assert.strictEqual(errorTag(o), "PolicyDenied")
          assert.strictEqual(!o.ok && o.kind, "denied")
        })
      )
    )

    it.effect("offer and permission never drift, for generated recipes and levels (threat 28)", () =>
      Effect.gen(function* () {
        const patterns = [
          "*",
          "world.tools.*",
          "world.tools.file.*",
          "world.tools.file.write",
          "world.tools.search.grep",
          "world.*.file.read"
        ]
        const arb = Schema.Struct({
          allow: Schema.Array(Schema.Literals(patterns)),
          deny: Schema.Array(Schema.Literals(patterns)),
          raise: Schema.Literals([0, 1, 2, 3]),
          trust: Schema.Literals([0, 1, 2, 3])
        })
        const { Arbitrary } = yield* Effect.promise(() => import("effect"))
        const samples = yield* Arbitrary.sampleEffect(Arbitrary.schema(arb), { count: 25, seed: 7 })
        for (const s of samples) {
          const recipe: Recipe.Recipe = { allow: s.allow, deny: s.deny, minTrust: { "world.tools.file.*": s.raise } }
          yield* run(
            { trust: s.trust as Trust.TrustLevel, recipe },
            Effect.gen(function* () {
              const road = yield* Invoke.Invoker
              const offered = new Set((yield* road.list).map((o) => o.path))
              for (const entry of road.registry.entries) {
                // An input that fails decoding after the gate still shows whether the gate let the call through.
                const o = yield* invoke(entry.path, { __probe: true })
                const refused = !o.ok && (o.error._tag === "PolicyDenied" || o.error._tag === "TrustDenied")
                assert.strictEqual(!refused, offered.has(entry.path), `${entry.path} under ${JSON.stringify(s)}`)
              }
            })
          )
        }
      })
    )

    it.effect(
      "trust cannot be raised by the request (threat 26) and identity fields do not spoof the caller (29)",
      () =>
        run(
          { trust: 0, observerId: "configured-agent" },
          Effect.gen(function* () {
            const o = yield* invoke("world.tools.file.write", {
              path: "c.txt",
              content: "x",
              trust: 3,
              observer: { id: "admin", trust: 3 },
              observerId: "admin"
            })
            assert.strictEqual(errorTag(o), "TrustDenied")
            yield* invoke("world.tools.file.read", { path: "a.txt", observerId: "admin", observer: "admin" })
            const audit = yield* AuditStore.AuditStore
            const entries = yield* audit.list({ limit: 50 })
            assert.isTrue(entries.length > 0)
            for (const e of entries) assert.strictEqual(e.observerId, "configured-agent")
          })
        )
    )

    it.effect("the L2 confirmation branch runs; a denial does not break the next call (threats 25, 27)", () =>
      Effect.gen(function* () {
        const answers = yield* Ref.make<Array<boolean>>([false, true])
        const asked = yield* Ref.make(0)
        yield* run(
          {
            trust: 2,
            recipe: { requireApproval: ["world.tools.file.list"] },
            approver: () =>
              Effect.gen(function* () {
                yield* Ref.update(asked, (n) => n + 1)
                const [first, ...rest] = yield* Ref.get(answers)
                yield* Ref.set(answers, rest)
                return first ?? false
              })
          },
          Effect.gen(function* () {
            // file.list is L0 but the recipe requires approval of every call, even at L2.
            const denied = yield* invoke("world.tools.file.list", {})
            assert.strictEqual(errorTag(denied), "ApprovalDenied")
            const approved = yield* invoke("world.tools.file.list", { path: "." })
            assert.isTrue(approved.ok, JSON.stringify(approved))
            // An L2 caller's write outside the writable globs would need confirmation too; inside them it is L1.
            const read = yield* invoke("world.tools.file.read", { path: "a.txt" })
            assert.isTrue(read.ok)
          })
        )
        assert.strictEqual(yield* Ref.get(asked), 2)
      })
    )

    it.effect("without an approver, approval-required calls are refused, pending an answer", () =>
      run(
        { trust: 3, recipe: { requireApproval: ["world.tools.file.read"] } },
        Effect.gen(function* () {
          const o = yield* invoke("world.tools.file.read", { path: "a.txt" })
          assert.strictEqual(errorTag(o), "ApprovalPending")
          assert.strictEqual(!o.ok && o.error.reason, "no-channel")
        })
      )
    )

    it.effect("the recipe raises a path's level, never lowers it", () =>
      Effect.gen(function* () {
        const raised = yield* run(
          { trust: 0, recipe: { minTrust: { "world.tools.file.read": 1 } } },
          invoke("world.tools.file.read", { path: "a.txt" })
        )
        assert.strictEqual(errorTag(raised), "TrustDenied")
        assert.strictEqual(!raised.ok && raised.error.reason, "the recipe raises this path's level")
        const lowered = yield* run(
          { trust: 0, recipe: { minTrust: { "world.tools.file.write": 0 } } },
          invoke("world.tools.file.write", { path: "new.txt", content: "x" })
        )
        assert.strictEqual(errorTag(lowered), "TrustDenied")
        // The tool's own level is what is missing here, and the error says nothing of the recipe.
        assert.isUndefined(!lowered.ok ? lowered.error.reason : "ok")
      })
    )

    it.effect("forbidden rules hold at every level", () =>
      run(
        { trust: 3 },
        Effect.gen(function* () {
          assert.strictEqual(errorTag(yield* invoke("world.tools.file.read", { path: ".env" })), "Forbidden")
          assert.strictEqual(
            errorTag(yield* invoke("world.tools.file.write", { path: ".git/hooks/pre-commit", content: "x" })),
            "Forbidden"
          )
        })
      )
    )

    it.effect("a call that gave the same result three times, nothing written, is refused (threat 30)", () =>
      run(
        {},
        Effect.gen(function* () {
          const outcomes = [
            yield* invoke("world.tools.file.read", { path: "a.txt" }),
            yield* invoke("world.tools.file.read", { path: "a.txt" }),
            yield* invoke("world.tools.file.read", { path: "a.txt" }),
            yield* invoke("world.tools.file.read", { path: "a.txt" }),
            yield* invoke("world.tools.file.read", { path: "b.md" })
          ]
          assert.deepStrictEqual(outcomes.map(errorTag), ["ok", "ok", "ok", "LoopDetected", "ok"])
        })
      )
    )

    it.effect(
      "another spelling of the path is the same call, and a key the tool does not take is refused (threat 41)",
      () =>
        run(
          {},
          Effect.gen(function* () {
            const outcomes = [
              yield* invoke("world.tools.file.read", { path: "a.txt" }),
              yield* invoke("world.tools.file.read", { path: "./a.txt", _: 1 }),
              yield* invoke("world.tools.file.read", { path: "./a.txt" }),
              yield* invoke("world.tools.file.read", { path: "x/../a.txt" }),
              yield* invoke("world.tools.file.read", { path: "a.txt", ignored: "yes" }),
              yield* invoke("world.tools.file.read", { path: "a.txt" })
            ]
            assert.deepStrictEqual(outcomes.map(errorTag), [
              "ok",
              "UnknownArguments",
              "ok",
              "ok",
              "UnknownArguments",
              "LoopDetected"
            ])
          })
        )
    )

    it.effect("read, edit, read, edit, read is progress, not a loop", () =>
      run(
        { trust: 1, session: "s1" },
        Effect.gen(function* () {
          const tags: Array<string> = []
          for (let i = 0; i < 4; i++) {
            tags.push(errorTag(yield* invoke("world.tools.file.read", { path: "a.txt" })))
            tags.push(
              errorTag(
                yield* invoke("world.tools.file.edit", {
                  path: "a.txt",
                  oldText: `beta${"!".repeat(i)}`,
                  newText: `beta${"!".repeat(i + 1)}`
                })
              )
            )
          }
          tags.push(errorTag(yield* invoke("world.tools.file.read", { path: "a.txt" })))
          assert.deepStrictEqual(tags, Array(9).fill("ok"))
        })
      )
    )

    it.effect("a call whose result changes is progress (a status that moves)", () =>
      Effect.gen(function* () {
        const root = workspace()
        yield* run(
          { root },
          Effect.gen(function* () {
            const tags: Array<string> = []
            for (let i = 0; i < 6; i++) {
              // Someone else edits the file between the reads: each read returns something new.
              writeFileSync(join(root, "a.txt"), `version ${i}\n`)
              tags.push(errorTag(yield* invoke("world.tools.file.read", { path: "a.txt" })))
            }
            assert.deepStrictEqual(tags, Array(6).fill("ok"))
          })
        )
      })
    )

    it.effect("rate limits of the recipe apply per caller", () =>
      run(
        { recipe: { rateLimits: { perMinute: 2 } } },
        Effect.gen(function* () {
          const outcomes = [
            yield* invoke("world.tools.file.read", { path: "a.txt" }),
            yield* invoke("world.tools.file.read", { path: "b.md" }),
            yield* invoke("world.tools.file.list", {})
          ]
          assert.deepStrictEqual(outcomes.map(errorTag), ["ok", "ok", "RateLimited"])
          assert.strictEqual(!outcomes[2]!.ok && outcomes[2]!.kind, "rate_limited")
        })
      )
    )
  })

  describe("invokeText", () => {
    it.effect("runs every call of a response, up to maxCallsPerResponse", () =>
      run(
        { recipe: { maxCallsPerResponse: 2 } },
        Effect.gen(function* () {
          const road = yield* Invoke.Invoker
          const outcomes = yield* road.invokeText(
            [
              "EXECUTE: world.tools.file.read --path=a.txt",
              '<tool_call>{"tool": "world_tools_file_read", "params": {"path": "b.md"}}</tool_call>',
              "EXECUTE: world.tools.file.list",
              "EXECUTE: world.tools.file.read path=oops"
            ].join("\n")
          )
          assert.deepStrictEqual(outcomes.map(errorTag), ["ParseError", "ok", "ok", "TooManyCalls"])
        })
      )
    )
  })

  describe("events", () => {
    it.effect("a call publishes invoked then completed; a denial publishes trust_denied", () =>
      run(
        { trust: 0 },
        Effect.gen(function* () {
          const events = yield* Events.Events
          const stream = yield* events.subscribe
          const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.take(stream, 4)))
          yield* Effect.yieldNow
          yield* invoke("world.tools.file.read", { path: "a.txt" })
          yield* invoke("world.tools.file.write", { path: "c.txt", content: "x" })
          const seen = (yield* Fiber.join(fiber)).map((e) => `${e._tag} ${"path" in e ? e.path : ""}`)
          assert.deepStrictEqual(seen, [
            "tool.invoked world.tools.file.read",
            "tool.completed world.tools.file.read",
            "tool.invoked world.tools.file.write",
            "tool.trust_denied world.tools.file.write"
          ])
        }).pipe(Effect.scoped)
      )
    )
  })
})
