import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Recipe } from "@ugent/agentese"
import { Effect, Exit } from "effect"

describe("Recipe", () => {
  describe("decide", () => {
    it("allows everything by default", () => {
      assert.deepStrictEqual(Recipe.decide({}, "world.tools.file.read", 0), {
        _tag: "Allowed",
        requiredTrust: 0,
        approval: false
      })
    })

    it("deny wins over allow", () => {
      const r = { allow: ["world.tools.file.*"], deny: ["world.tools.file.write"] }
      assert.strictEqual(Recipe.decide(r, "world.tools.file.read", 0)._tag, "Allowed")
      assert.strictEqual(Recipe.decide(r, "world.tools.file.write", 1)._tag, "Denied")
    })

    it("a path outside every allow pattern is denied", () => {
      assert.strictEqual(Recipe.decide({ allow: ["world.tools.file.*"] }, "world.tools.git.log", 0)._tag, "Denied")
    })

    it("minTrust raises a tool's level and never lowers it", () => {
      const r = { minTrust: { "world.tools.*": 2 as const, "world.tools.file.write": 0 as const } }
      assert.deepStrictEqual(Recipe.decide(r, "world.tools.file.read", 0), {
        _tag: "Allowed",
        requiredTrust: 2,
        approval: false
      })
      assert.deepStrictEqual(Recipe.decide({ minTrust: { "*": 0 as const } }, "world.tools.file.write", 1), {
        _tag: "Allowed",
        requiredTrust: 1,
        approval: false
      })
    })

    it("requireApproval marks paths", () => {
      assert.deepStrictEqual(Recipe.decide({ requireApproval: ["world.tools.file.*"] }, "world.tools.file.edit", 1), {
        _tag: "Allowed",
        requiredTrust: 1,
        approval: true
      })
    })
  })

  describe("decode and load", () => {
    it.effect("decodes a valid recipe", () =>
      Effect.gen(function* () {
        const r = yield* Recipe.decode({
          allow: ["*"],
          maxCallsPerResponse: 3,
          rateLimits: { perMinute: 10, perHour: 200 }
        })
        assert.strictEqual(r.maxCallsPerResponse, 3)
      })
    )

    it.effect("refuses unknown fields and wrong types with a message that shows a correct recipe", () =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(Recipe.decode({ allow: "world.*", trust: 3 }))
        assert.strictEqual(e._tag, "RecipeError")
        assert.match(e.message, /allow/)
        assert.match(e.message, /A recipe is JSON such as/)
        assert.isTrue(Exit.isFailure(yield* Effect.exit(Recipe.decode({ maxCallsPerResponse: 0 }))))
        assert.isTrue(Exit.isFailure(yield* Effect.exit(Recipe.decode({ minTrust: { "*": 7 } }))))
      })
    )

    it.effect("families: a list of module specifiers, each a non-empty string", () =>
      Effect.gen(function* () {
        const r = yield* Recipe.decode({ families: ["./families/notes.ts", "ugent-family-notes"] })
        assert.deepStrictEqual(r.families, ["./families/notes.ts", "ugent-family-notes"])
        for (const families of ["./notes.ts", [""], [1]]) {
          const e = yield* Effect.flip(Recipe.decode({ families }))
          assert.match(e.message, /families/)
        }
      })
    )

    it.effect("loads a file; a missing or broken file is a RecipeError", () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "ugent-recipe-"))
        writeFileSync(join(dir, "ok.json"), JSON.stringify({ deny: ["world.tools.git.*"] }))
        writeFileSync(join(dir, "bad.json"), "{ not json")
        assert.deepStrictEqual((yield* Recipe.load(join(dir, "ok.json"))).deny, ["world.tools.git.*"])
        assert.strictEqual((yield* Effect.flip(Recipe.load(join(dir, "bad.json"))))._tag, "RecipeError")
        const missing = yield* Effect.flip(Recipe.load(join(dir, "missing.json")))
        assert.strictEqual(missing._tag, "RecipeError")
        assert.match(missing.message, /does not exist/)
        assert.notMatch(missing.message, /ENOENT/)
      })
    )
  })
})
