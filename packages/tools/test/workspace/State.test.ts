import { execFileSync } from "node:child_process"
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { StateDir } from "@ugent/tools"
import { Effect } from "effect"
import { fixture, OUTSIDE_SECRET } from "./fixture.ts"

const isRoot = typeof process.getuid === "function" && process.getuid() === 0

/** The reason of a refusal, or the tag of another failure. */
const refusal = <A>(effect: Effect.Effect<A, StateDir.OpenError>) =>
  Effect.map(Effect.flip(effect), (e) => (e._tag === "StateRefused" ? e.reason : e._tag))

describe("StateDir", () => {
  it.effect("makes .ugent (0700), its .gitignore, a 0600 key once, the database path and reports/", () =>
    Effect.gen(function* () {
      const fx = yield* fixture
      const state = yield* StateDir.open(fx.root)
      const dir = join(fx.root, ".ugent")
      assert.strictEqual(state.path, dir)
      assert.strictEqual(statSync(dir).mode & 0o777, 0o700)
      assert.strictEqual(readFileSync(join(dir, ".gitignore"), "utf8"), "*\n")
      const key = yield* state.proofKey
      assert.strictEqual(key.length, 32)
      assert.strictEqual(statSync(join(dir, "proof.key")).mode & 0o777, 0o600)
      const again = yield* Effect.flatMap(StateDir.open(fx.root), (s) => s.proofKey)
      assert.deepStrictEqual(again, key)
      assert.strictEqual(yield* state.database(), join(dir, "ugent.db"))
      assert.strictEqual(yield* state.reports, join(dir, "reports"))
      assert.isTrue(statSync(join(dir, "reports")).isDirectory())
      // No temporary file is left behind.
      assert.deepStrictEqual(readdirSync(dir).sort(), [".gitignore", "proof.key", "reports"])
    })
  )

  it.effect("keeps a .gitignore the user wrote", () =>
    Effect.gen(function* () {
      const fx = yield* fixture
      fx.file(".ugent/.gitignore", "# mine\n*\n")
      yield* StateDir.open(fx.root)
      assert.strictEqual(readFileSync(join(fx.root, ".ugent", ".gitignore"), "utf8"), "# mine\n*\n")
    })
  )

  it.live("processes racing to make the key all end with the same one", () =>
    Effect.gen(function* () {
      const fx = yield* fixture
      const keys = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        () => Effect.flatMap(StateDir.open(fx.root), (s) => s.proofKey),
        { concurrency: 8 }
      )
      for (const k of keys) assert.deepStrictEqual(k, keys[0])
    })
  )

  describe("threat 36: a planted .ugent or key is refused, with how to fix it", () => {
    it.effect(".ugent as a link to a directory outside: nothing is written there", () =>
      Effect.gen(function* () {
        const fx = yield* fixture
        symlinkSync(fx.outside, join(fx.root, ".ugent"))
        const e = yield* Effect.flip(StateDir.open(fx.root))
        assert.strictEqual(e._tag, "StateRefused")
        assert.strictEqual(e._tag === "StateRefused" && e.reason, "link")
        assert.include(e.message, "Remove the link")
        assert.deepStrictEqual(readdirSync(fx.outside), ["data.txt"])
      })
    )

    it.effect(".ugent as a dangling link, or as a file", () =>
      Effect.gen(function* () {
        const fx = yield* fixture
        symlinkSync(join(fx.outside, "made-by-ugent"), join(fx.root, ".ugent"))
        assert.strictEqual(yield* refusal(StateDir.open(fx.root)), "link")
        assert.isFalse(existsSync(join(fx.outside, "made-by-ugent")))
        const other = yield* fixture
        other.file(".ugent", "not a folder\n")
        assert.strictEqual(yield* refusal(StateDir.open(other.root)), "not-a-directory")
      })
    )

    it.effect("a key that is a link (even to a good key) is never followed", () =>
      Effect.gen(function* () {
        const fx = yield* fixture
        const good = "ab".repeat(32)
        writeFileSync(join(fx.outside, "known.key"), good, { mode: 0o600 })
        mkdirSync(join(fx.root, ".ugent"), { mode: 0o700 })
        symlinkSync(join(fx.outside, "known.key"), join(fx.root, ".ugent", "proof.key"))
        const state = yield* StateDir.open(fx.root)
        const e = yield* Effect.flip(state.proofKey)
        assert.strictEqual(e._tag === "StateRefused" && e.reason, "link")
        // A dangling link is not written through either.
        const other = yield* fixture
        mkdirSync(join(other.root, ".ugent"), { mode: 0o700 })
        symlinkSync(join(other.outside, "new.key"), join(other.root, ".ugent", "proof.key"))
        assert.strictEqual(yield* refusal(Effect.flatMap(StateDir.open(other.root), (s) => s.proofKey)), "link")
        assert.isFalse(existsSync(join(other.outside, "new.key")))
      })
    )

    it.effect("a key others can read (as a clone or a tar would leave it) is refused: delete it", () =>
      Effect.gen(function* () {
        const fx = yield* fixture
        fx.file(".ugent/proof.key", "cd".repeat(32))
        chmodSync(join(fx.root, ".ugent", "proof.key"), 0o644)
        const e = yield* Effect.flip(Effect.flatMap(StateDir.open(fx.root), (s) => s.proofKey))
        assert.strictEqual(e._tag === "StateRefused" && e.reason, "readable-by-others")
        assert.include(e.message, "Delete it")
        for (const mode of [0o640, 0o604, 0o660]) {
          chmodSync(join(fx.root, ".ugent", "proof.key"), mode)
          assert.strictEqual(
            yield* refusal(Effect.flatMap(StateDir.open(fx.root), (s) => s.proofKey)),
            "readable-by-others"
          )
        }
      })
    )

    it.effect("a key that is not a regular file, or not a key, is refused", () =>
      Effect.gen(function* () {
        const fx = yield* fixture
        fx.dir(".ugent/proof.key")
        assert.strictEqual(yield* refusal(Effect.flatMap(StateDir.open(fx.root), (s) => s.proofKey)), "not-a-file")
        const fifo = yield* fixture
        fifo.dir(".ugent")
        execFileSync("mkfifo", ["-m", "600", join(fifo.root, ".ugent", "proof.key")])
        assert.strictEqual(yield* refusal(Effect.flatMap(StateDir.open(fifo.root), (s) => s.proofKey)), "not-a-file")
        const short = yield* fixture
        short.file(".ugent/proof.key", "abcd")
        chmodSync(join(short.root, ".ugent", "proof.key"), 0o600)
        assert.strictEqual(yield* refusal(Effect.flatMap(StateDir.open(short.root), (s) => s.proofKey)), "malformed")
      })
    )

    it.effect("the database and its companions, and reports/, must not be links", () =>
      Effect.gen(function* () {
        for (const name of ["ugent.db", "ugent.db-wal", "ugent.db-shm", "ugent.db-journal"]) {
          const fx = yield* fixture
          fx.dir(".ugent")
          symlinkSync(join(fx.outside, "data.txt"), join(fx.root, ".ugent", name))
          assert.strictEqual(yield* refusal(Effect.flatMap(StateDir.open(fx.root), (s) => s.database())), "link", name)
          assert.strictEqual(readFileSync(join(fx.outside, "data.txt"), "utf8"), OUTSIDE_SECRET)
        }
        const fx = yield* fixture
        fx.dir(".ugent")
        symlinkSync(fx.outside, join(fx.root, ".ugent", "reports"))
        assert.strictEqual(yield* refusal(Effect.flatMap(StateDir.open(fx.root), (s) => s.reports)), "link")
        assert.strictEqual(
          yield* refusal(Effect.flatMap(StateDir.open(fx.root), (s) => s.database("../x.db"))),
          "not-a-file"
        )
      })
    )

    it.effect("a .ugent others can write is refused", () =>
      Effect.gen(function* () {
        const fx = yield* fixture
        fx.dir(".ugent")
        chmodSync(join(fx.root, ".ugent"), 0o777)
        assert.strictEqual(yield* refusal(StateDir.open(fx.root)), "writable-by-others")
      })
    )

    it.effect.skipIf(!isRoot)("a .ugent or a key owned by another user is refused", () =>
      Effect.gen(function* () {
        const fx = yield* fixture
        fx.dir(".ugent")
        chownSync(join(fx.root, ".ugent"), 4242, 4242)
        assert.strictEqual(yield* refusal(StateDir.open(fx.root)), "not-owned")
        const key = yield* fixture
        key.file(".ugent/proof.key", "ef".repeat(32))
        chmodSync(join(key.root, ".ugent", "proof.key"), 0o600)
        chownSync(join(key.root, ".ugent", "proof.key"), 4242, 4242)
        assert.strictEqual(yield* refusal(Effect.flatMap(StateDir.open(key.root), (s) => s.proofKey)), "not-owned")
        assert.isTrue(lstatSync(join(key.root, ".ugent", "proof.key")).isFile())
      })
    )
  })
})
