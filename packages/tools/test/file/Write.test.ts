import { chownSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Changes, ReadProof } from "@ugent/core"
import { Read, Write } from "@ugent/tools"
import { Effect } from "effect"
import { withWorkspace } from "../workspace/fixture.ts"

/** Records the changes published while `self` runs. */
const recording = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const seen: Array<Changes.FileChange> = []
    const hub = yield* Changes.Changes
    yield* hub.listen((c) => seen.push(c))
    const a = yield* self
    return [a, seen] as const
  })

describe("file.write", () => {
  it.effect.runIf(process.geteuid?.() === 0)(
    "as root, what it writes belongs to the workspace's user: a new file and directory to their parent's owner, a replaced file to its own",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          chownSync(fx.root, 65534, 65534)
          const created = yield* Write.write.run({ path: "docs/new.md", content: "# New\n" })
          for (const p of ["docs", "docs/new.md"]) assert.strictEqual(statSync(fx.at(p)).uid, 65534, p)
          writeFileSync(fx.at("theirs.md"), "a\n")
          chownSync(fx.at("theirs.md"), 4321, 4321)
          const read = yield* Read.read.run({ path: "theirs.md" })
          yield* Write.write.run({ path: "theirs.md", content: "b\n", proof: read.proof })
          assert.deepStrictEqual([statSync(fx.at("theirs.md")).uid, statSync(fx.at("theirs.md")).gid], [4321, 4321])
          assert.isTrue(created.created)
        })
      )
  )

  it.effect(
    "creates a file without a proof, with a diff from /dev/null, a fresh Whole proof and a 'created' change",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const [out, seen] = yield* recording(Write.write.run({ path: "docs/new.md", content: "# New\n" }))
          assert.isTrue(out.created)
          assert.strictEqual(out.bytes, 6)
          assert.include(out.diff, "--- /dev/null")
          assert.include(out.diff, "+++ b/docs/new.md")
          assert.include(out.diff, "+# New")
          assert.strictEqual(out.proof.coverage._tag, "Whole")
          assert.strictEqual(out.proof.hash, ReadProof.hash("# New\n"))
          assert.strictEqual(readFileSync(fx.at("docs/new.md"), "utf8"), "# New\n")
          assert.deepStrictEqual(seen, [{ path: fx.at("docs/new.md"), relative: "docs/new.md", kind: "created" }])
        })
      )
  )

  it.effect("refuses to overwrite an existing file without a proof (never-read), leaving it intact", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "keep\n")
        const e = yield* Effect.flip(Write.write.run({ path: "a.txt", content: "lost\n" }))
        assert.strictEqual(e._tag, "ProofRejected")
        assert.strictEqual((e as ReadProof.ProofRejected).reason, "never-read")
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "keep\n")
      })
    )
  )

  it.effect("overwrites with a Whole proof, returning the diff, a fresh proof and a 'modified' change", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "one\ntwo\n")
        const { proof } = yield* Read.read.run({ path: "a.txt" })
        const [out, seen] = yield* recording(Write.write.run({ path: "a.txt", content: "one\n2\n", proof }))
        assert.isFalse(out.created)
        assert.include(out.diff, "-two")
        assert.include(out.diff, "+2")
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "one\n2\n")
        assert.strictEqual(seen[0]?.kind, "modified")
        // The fresh proof chains without a re-read.
        const again = yield* Write.write.run({ path: "a.txt", content: "three\n", proof: out.proof })
        assert.isFalse(again.created)
      })
    )
  )

  it.effect("a proof of some lines only is refused for an overwrite (partial)", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "1\n2\n3\n")
        const { proof } = yield* Read.read.run({ path: "a.txt", limit: 2 })
        const e = yield* Effect.flip(Write.write.run({ path: "a.txt", content: "x\n", proof }))
        assert.strictEqual((e as ReadProof.ProofRejected).reason, "partial")
        assert.include(e.message, "Read the whole file")
      })
    )
  )

  it.effect("a stale proof is refused (changed), decided by hash even when size and mtime are restored", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        const path = fx.file("a.txt", "aaaa\n")
        const { proof } = yield* Read.read.run({ path: "a.txt" })
        const before = statSync(path)
        writeFileSync(path, "bbbb\n")
        utimesSync(path, before.atime, before.mtime)
        const e = yield* Effect.flip(Write.write.run({ path: "a.txt", content: "mine\n", proof }))
        assert.strictEqual((e as ReadProof.ProofRejected).reason, "changed")
        assert.strictEqual(readFileSync(path, "utf8"), "bbbb\n")
      })
    )
  )

  it.effect("a proof of another file is refused (other-file)", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "same\n")
        fx.file("b.txt", "same\n")
        const { proof } = yield* Read.read.run({ path: "a.txt" })
        const e = yield* Effect.flip(Write.write.run({ path: "b.txt", content: "x\n", proof }))
        assert.strictEqual((e as ReadProof.ProofRejected).reason, "other-file")
      })
    )
  )

  it.effect("a look-alike proof object (not issued by ReadProof) is refused (invalid)", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "x\n")
        const { proof } = yield* Read.read.run({ path: "a.txt" })
        // Same fields, no brand: the shape a forger could build.
        const forged = { ...proof, token: proof.token } as unknown as ReadProof.ReadProof
        const e = yield* Effect.flip(Write.write.run({ path: "a.txt", content: "evil\n", proof: forged }))
        assert.strictEqual((e as ReadProof.ProofRejected).reason, "invalid")
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "x\n")
      })
    )
  )

  it.effect("a proof of a file deleted since is refused (deleted); without a proof the file is created", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("gone.txt", "x\n")
        const { proof } = yield* Read.read.run({ path: "gone.txt" })
        rmSync(fx.at("gone.txt"))
        const e = yield* Effect.flip(Write.write.run({ path: "gone.txt", content: "y\n", proof }))
        assert.strictEqual((e as ReadProof.ProofRejected).reason, "deleted")
        const out = yield* Write.write.run({ path: "gone.txt", content: "y\n" })
        assert.isTrue(out.created)
      })
    )
  )

  it.effect("a file read under a raised byte limit can be replaced and edited with its proof", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        const big = "0123456789abcdef\n".repeat(130_000)
        fx.file("big.txt", big)
        const { proof } = yield* Read.read
          .run({ path: "big.txt", limit: 200_000 })
          .pipe(Effect.provide(Read.layerLimits({ maxBytes: 4_000_000 })))
        assert.strictEqual(proof.coverage._tag, "Whole")
        const out = yield* Write.write.run({ path: "big.txt", content: `${big}tail\n`, proof })
        assert.strictEqual(out.bytes, big.length + 5)
        // A file grown past the proof's size has changed, whatever the limits: refused without reading it all.
        writeFileSync(fx.at("big.txt"), `${big}tail\nmore\n`)
        const e = yield* Effect.flip(Write.write.run({ path: "big.txt", content: "x", proof: out.proof }))
        assert.strictEqual((e as ReadProof.ProofRejected).reason, "changed")
      })
    )
  )

  it.effect("writes are atomic: no temporary file is left, and the content is exactly what was given", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        const content = "héllo wörld ✓\n".repeat(1000)
        yield* Write.write.run({ path: "u.txt", content })
        assert.deepStrictEqual(readdirSync(fx.root), ["u.txt"])
        assert.strictEqual(readFileSync(fx.at("u.txt"), "utf8"), content)
      })
    )
  )

  it.effect(
    "a file created through a linked directory inside the root lands at the real path and is reported there",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.dir("real")
          fx.link("real", "alias")
          const [out, seen] = yield* recording(Write.write.run({ path: "alias/new.txt", content: "x\n" }))
          assert.strictEqual(out.path, "real/new.txt")
          assert.strictEqual(out.proof.path, "real/new.txt")
          assert.strictEqual(seen[0]?.relative, "real/new.txt")
          assert.strictEqual(readFileSync(fx.at("real/new.txt"), "utf8"), "x\n")
        })
      )
  )

  it.effect("paths are checked: outside, blocked and .git targets are refused", () =>
    withWorkspace(() =>
      Effect.gen(function* () {
        for (const [path, tag] of [
          ["../outside/x.txt", "OutsideWorkspace"],
          [".env", "BlockedPath"],
          [".git/hooks/pre-commit", "BlockedPath"],
          ["a\0b", "InvalidPath"]
        ] as const) {
          const e = yield* Effect.flip(Write.write.run({ path, content: "x" }))
          assert.strictEqual(e._tag, tag, path)
        }
      })
    )
  )

  it.effect("declares its effects: reads and writes the file system, idempotent, trust 1", () =>
    Effect.sync(() => {
      assert.strictEqual(Write.write.trust, 1)
      assert.isTrue(Write.write.effects.readsFs)
      assert.isTrue(Write.write.effects.writesFs)
      assert.isTrue(Write.write.effects.idempotent)
      assert.strictEqual(Write.write.name, "file.write")
    })
  )
})
