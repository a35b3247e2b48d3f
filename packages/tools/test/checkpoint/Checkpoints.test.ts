/**
 * Checkpoints of the workspace's writes: each write or edit that changes a
 * file leaves one (content before and after, kept once by hash), and a
 * restore puts the workspace back as it was before one of them, all or
 * nothing, refusing (naming the files) what would lose someone else's
 * change or write through a link, a directory or outside the root.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync
} from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Changes, Observer, Trust } from "@ugent/core"
import { Checkpoint, Checkpoints, Edit, Read, Workspace, Write } from "@ugent/tools"
import { Effect, Layer } from "effect"
import { type Fixture, fixture } from "../workspace/fixture.ts"

const withCheckpoints = <A, E, R>(f: (fx: Fixture) => Effect.Effect<A, E, R>, options: Checkpoints.Options = {}) =>
  Effect.gen(function* () {
    const fx = yield* fixture
    const layer = Layer.mergeAll(
      Workspace.layer({ root: fx.root, checkpoints: options }),
      Changes.layer,
      Trust.grant(1),
      Observer.layer({ id: "agent-7", trust: 1 })
    )
    return yield* f(fx).pipe(Effect.provide(layer))
  })

const read = (path: string) => Read.read.run({ path })
const restore = (to: string, proofs?: ReadonlyArray<unknown>) =>
  Checkpoint.restore.run(proofs === undefined ? { to } : ({ to, proofs } as never))
const blobs = (fx: Fixture) => readdirSync(fx.at(".ugent/checkpoints")).filter((n) => /^[0-9a-f]{64}$/.test(n))

/** A session's three changes: a file created, one written whole, one edited. */
const session = (fx: Fixture) =>
  Effect.gen(function* () {
    fx.file("a.txt", "alpha\n")
    fx.file("src/b.ts", "export const b = 1\n")
    yield* Write.write.run({ path: "notes/new.md", content: "# new\n" })
    yield* Write.write.run({ path: "a.txt", content: "ALPHA\n", proof: (yield* read("a.txt")).proof })
    yield* Edit.edit.run({ path: "src/b.ts", proof: (yield* read("src/b.ts")).proof, oldText: "1", newText: "2" })
    const listed = yield* Checkpoint.list.run({})
    return listed.checkpoints
  })

/** The same workspace as another caller, at a trust level. */
const asCaller = <A, E, R>(fx: Fixture, id: string, level: 1 | 2, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provide(
      Layer.mergeAll(
        Workspace.layer({ root: fx.root, checkpoints: {} }),
        Changes.layer,
        Trust.grant(level),
        Observer.layer({ id, trust: level })
      )
    )
  )

describe("checkpoints", () => {
  it.effect(
    "threat: an L1 caller cannot undo another caller's checkpoints without reading the files they changed (or L2)",
    () =>
      withCheckpoints((fx) =>
        Effect.gen(function* () {
          const listed = yield* session(fx)
          const oldest = listed.at(-1)!.id
          const theirs = ["ALPHA\n", "export const b = 2\n", "# new\n"]
          const text = (p: string) => readFileSync(fx.at(p), "utf8")
          const now = () => [text("a.txt"), text("src/b.ts"), text("notes/new.md")]
          // agent-8 has read nothing: refused at L1, naming the other caller and the files, and nothing changes.
          const denied = yield* Effect.flip(asCaller(fx, "agent-8", 1, restore(oldest)))
          assert.strictEqual(denied._tag, "TrustDenied")
          assert.include(denied.message, "agent-7")
          assert.include(denied.message, "a.txt, notes/new.md, src/b.ts")
          assert.deepStrictEqual(now(), theirs)
          // A proof of one file is not enough.
          const one = yield* asCaller(fx, "agent-8", 1, read("a.txt"))
          const partly = yield* Effect.flip(asCaller(fx, "agent-8", 1, restore(oldest, [one.proof])))
          assert.include(partly.message, "notes/new.md, src/b.ts")
          assert.notInclude(partly.message, "a.txt,")
          assert.deepStrictEqual(now(), theirs)
          // Having read every file as it is now, L1 may undo it, as it could overwrite them.
          const proofs = yield* asCaller(
            fx,
            "agent-8",
            1,
            Effect.forEach(["a.txt", "src/b.ts", "notes/new.md"], (p) => Effect.map(read(p), (r) => r.proof))
          )
          const done = yield* asCaller(fx, "agent-8", 1, restore(oldest, proofs))
          assert.strictEqual(done.undone.length, 3)
          assert.deepStrictEqual([text("a.txt"), text("src/b.ts")], ["alpha\n", "export const b = 1\n"])
          // The restore was agent-8's: agent-8 undoes it with nothing more; agent-7 may at L2 without reading.
          const back = yield* asCaller(fx, "agent-8", 1, restore(done.checkpoint!))
          assert.deepStrictEqual(now(), theirs)
          assert.isString(back.checkpoint)
          const l2 = yield* asCaller(fx, "agent-9", 2, restore(oldest))
          assert.strictEqual(l2.undone.length, 5)
          assert.strictEqual(text("a.txt"), "alpha\n")
        })
      )
  )

  it.effect(
    "each write and edit leaves a checkpoint, newest first: the file, its content before and after, caller, time",
    () =>
      withCheckpoints((fx) =>
        Effect.gen(function* () {
          const listed = yield* session(fx)
          assert.deepStrictEqual(
            listed.map((c) => c.files.map((f) => [f.path, f.change])),
            [[["src/b.ts", "modified"]], [["a.txt", "modified"]], [["notes/new.md", "created"]]]
          )
          for (const c of listed) {
            assert.strictEqual(c.caller, "agent-7")
            assert.match(c.at, /^\d{4}-\d\d-\d\dT/)
            assert.isTrue(c.files[0]!.kept)
          }
          assert.strictEqual(new Set(listed.map((c) => c.id)).size, 3)
          assert.strictEqual(listed[0]!.files[0]!.before!.size, "export const b = 1\n".length)
          // before and after of three files, one created: five contents, each kept once.
          assert.strictEqual(blobs(fx).length, 5)
        })
      )
  )

  it.effect("restore to before all of it is byte-identical to the start, and the restore can be undone", () =>
    withCheckpoints((fx) =>
      Effect.gen(function* () {
        const listed = yield* session(fx)
        const done = yield* restore(listed.at(-1)!.id)
        assert.deepStrictEqual(
          done.undone,
          listed.map((c) => c.id)
        )
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "alpha\n")
        assert.strictEqual(readFileSync(fx.at("src/b.ts"), "utf8"), "export const b = 1\n")
        // The directory the write made for it goes too.
        assert.isFalse(existsSync(fx.at("notes")))
        assert.deepStrictEqual(
          done.files.map((f) => [f.path, f.change]),
          [
            ["a.txt", "modified"],
            ["notes/new.md", "deleted"],
            ["src/b.ts", "modified"]
          ]
        )
        // The restore's proofs let an edit follow without a read.
        const a = done.files.find((f) => f.path === "a.txt")!
        yield* Edit.edit.run({ path: "a.txt", proof: a.proof!, oldText: "alpha", newText: "beta" })
        const [edit, own] = (yield* Checkpoint.list.run({})).checkpoints
        assert.strictEqual(own!.id, done.checkpoint)
        yield* restore(edit!.id)
        yield* restore(done.checkpoint!)
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "ALPHA\n")
        assert.strictEqual(readFileSync(fx.at("notes/new.md"), "utf8"), "# new\n")
        assert.strictEqual(readFileSync(fx.at("src/b.ts"), "utf8"), "export const b = 2\n")
      })
    )
  )

  it.effect(
    "a person's change since refuses the restore, naming the file; nothing is restored; a proof of reading it lets it through",
    () =>
      withCheckpoints((fx) =>
        Effect.gen(function* () {
          const listed = yield* session(fx)
          writeFileSync(fx.at("a.txt"), "typed by a person\n")
          const refused = yield* Effect.flip(restore(listed.at(-1)!.id))
          assert.strictEqual(refused._tag, "RestoreRefused")
          assert.deepStrictEqual(refused._tag === "RestoreRefused" && [refused.reason, refused.files], [
            "changed",
            ["a.txt"]
          ])
          assert.include(refused.message, "a.txt changed since")
          // All or nothing: the other files were not touched either.
          assert.strictEqual(readFileSync(fx.at("src/b.ts"), "utf8"), "export const b = 2\n")
          assert.isTrue(existsSync(fx.at("notes/new.md")))
          const seen = yield* read("a.txt")
          yield* restore(listed.at(-1)!.id, [seen.proof])
          assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "alpha\n")
          assert.isFalse(existsSync(fx.at("notes/new.md")))
        })
      )
  )

  it.effect("restore after write is identity on an unchanged file, and a deleted file comes back", () =>
    withCheckpoints((fx) =>
      Effect.gen(function* () {
        fx.file("keep.txt", "one\n")
        yield* Write.write.run({ path: "keep.txt", content: "two\n", proof: (yield* read("keep.txt")).proof })
        const [write] = (yield* Checkpoint.list.run({})).checkpoints
        unlinkSync(fx.at("keep.txt"))
        yield* restore(write!.id)
        assert.strictEqual(readFileSync(fx.at("keep.txt"), "utf8"), "one\n")
      })
    )
  )

  it.effect(
    "a file that is now a symbolic link, a directory, or behind a link to outside: a typed refusal, nothing changed",
    () =>
      withCheckpoints((fx) =>
        Effect.gen(function* () {
          const listed = yield* session(fx)
          const oldest = listed.at(-1)!.id
          const refusal = (e: unknown) => {
            const r = e as Checkpoints.RestoreRefused
            return [r._tag, r.reason, r.files]
          }
          rmSync(fx.at("a.txt"))
          symlinkSync(join(fx.outside, "data.txt"), fx.at("a.txt"))
          assert.deepStrictEqual(refusal(yield* Effect.flip(restore(oldest))), ["RestoreRefused", "symlink", ["a.txt"]])
          rmSync(fx.at("a.txt"))
          mkdirSync(fx.at("a.txt"))
          assert.deepStrictEqual(refusal(yield* Effect.flip(restore(oldest))), [
            "RestoreRefused",
            "directory",
            ["a.txt"]
          ])
          rmSync(fx.at("a.txt"), { recursive: true })
          renameSync(fx.at("src"), fx.at("src-moved"))
          symlinkSync(fx.outside, fx.at("src"))
          assert.deepStrictEqual(refusal(yield* Effect.flip(restore(oldest))), [
            "RestoreRefused",
            "outside",
            ["src/b.ts"]
          ])
          assert.isTrue(existsSync(fx.at("notes/new.md")))
          assert.deepStrictEqual(readdirSync(fx.outside), ["data.txt"])
        })
      )
  )

  it.effect("a file that cannot be written back undoes what the restore already wrote: all or nothing", () =>
    withCheckpoints((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "alpha\n")
        fx.file("dir/c.txt", "sea\n")
        yield* Write.write.run({ path: "a.txt", content: "ALPHA\n", proof: (yield* read("a.txt")).proof })
        const [write] = (yield* Checkpoint.list.run({})).checkpoints
        // A deletion recorded as the shell records one, then the directory becomes a file: c.txt cannot come back.
        rmSync(fx.at("dir"), { recursive: true })
        const ws = yield* Workspace.Workspace
        yield* ws.checkpoints!.record([
          { path: "dir/c.txt", before: new TextEncoder().encode("sea\n"), after: undefined }
        ])
        writeFileSync(fx.at("dir"), "a file now\n")
        const failed = yield* Effect.flip(restore(write!.id))
        assert.strictEqual(failed._tag, "NotADirectory")
        // a.txt (restored first, in path order) was put back as it was: nothing half done.
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "ALPHA\n")
        assert.strictEqual(readFileSync(fx.at("dir"), "utf8"), "a file now\n")
        assert.strictEqual((yield* Checkpoint.list.run({})).total, 2)
      })
    )
  )

  it.effect("two restores at once: one runs, the other is refused as busy", () =>
    withCheckpoints((fx) =>
      Effect.gen(function* () {
        const listed = yield* session(fx)
        const [one, two] = yield* Effect.all(
          [Effect.result(restore(listed.at(-1)!.id)), Effect.result(restore(listed.at(-1)!.id))],
          {
            concurrency: "unbounded"
          }
        )
        const outcomes = [one!, two!].map((r) =>
          r._tag === "Success" ? "ok" : (r.failure as Checkpoints.RestoreRefused).reason
        )
        assert.sameMembers(outcomes, ["ok", "busy"])
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "alpha\n")
      })
    )
  )

  it.effect("an unknown id is CheckpointNotFound", () =>
    withCheckpoints(() =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(restore("nope"))
        assert.strictEqual(e._tag, "CheckpointNotFound")
        assert.include(e.message, "self.tools.checkpoint.list")
      })
    )
  )

  it.effect("a write over the cap is refused with CheckpointRefused and writes nothing", () =>
    withCheckpoints(
      (fx) =>
        Effect.gen(function* () {
          fx.file("big.txt", "x".repeat(200))
          const e = yield* Effect.flip(Write.write.run({ path: "new.txt", content: "y".repeat(101) }))
          assert.strictEqual(e._tag, "CheckpointRefused")
          assert.isFalse(existsSync(fx.at("new.txt")))
          // The content before is over the cap too: refused under the lock, the file intact.
          const seen = yield* Read.read.run({ path: "big.txt" })
          const over = yield* Effect.flip(Write.write.run({ path: "big.txt", content: "small", proof: seen.proof }))
          assert.strictEqual(over._tag, "CheckpointRefused")
          assert.strictEqual(readFileSync(fx.at("big.txt"), "utf8"), "x".repeat(200))
        }),
      { maxFileBytes: 100 }
    )
  )

  it.effect("past the total cap the oldest checkpoints are dropped with the contents only they kept", () =>
    withCheckpoints(
      (fx) =>
        Effect.gen(function* () {
          let proof = (yield* Write.write.run({ path: "log.txt", content: "0".repeat(40) })).proof
          for (let i = 1; i <= 6; i++) {
            proof = (yield* Write.write.run({ path: "log.txt", content: String(i).repeat(40), proof })).proof
          }
          const listed = (yield* Checkpoint.list.run({})).checkpoints
          assert.isBelow(listed.length, 7)
          assert.isAtMost(blobs(fx).length * 40, 100 + 40)
          // The newest still restores.
          yield* restore(listed[0]!.id)
          assert.strictEqual(readFileSync(fx.at("log.txt"), "utf8"), "5".repeat(40))
        }),
      { maxTotalBytes: 100 }
    )
  )

  it.effect("a checkpoint folder planted as a link refuses the write (StateRefused) and nothing is written", () =>
    withCheckpoints((fx) =>
      Effect.gen(function* () {
        mkdirSync(fx.at(".ugent"), { mode: 0o700 })
        symlinkSync(fx.outside, fx.at(".ugent/checkpoints"))
        const e = yield* Effect.flip(Write.write.run({ path: "a.txt", content: "a\n" }))
        assert.strictEqual(e._tag, "StateRefused")
        assert.isFalse(existsSync(fx.at("a.txt")))
        assert.deepStrictEqual(readdirSync(fx.outside), ["data.txt"])
      })
    )
  )

  it.effect("without checkpoints the workspace keeps none and the family offers no tool", () =>
    Effect.gen(function* () {
      const fx = yield* fixture
      const members = yield* Effect.scoped(Checkpoint.family.build).pipe(
        Effect.provide(Workspace.layer({ root: fx.root }))
      )
      assert.deepStrictEqual(Object.keys(members), [])
      yield* Write.write
        .run({ path: "a.txt", content: "a\n" })
        .pipe(Effect.provide(Layer.mergeAll(Workspace.layer({ root: fx.root }), Trust.grant(1))))
      assert.isFalse(existsSync(fx.at(".ugent")))
    })
  )
})
