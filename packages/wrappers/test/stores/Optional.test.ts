/**
 * PostgreSQL and Redis are optional peers, imported when their layer is
 * built: a missing package is reported by name, with the command that
 * installs it. (The consumer test checks the PostgreSQL case on a real
 * install without `@effect/sql-pg`.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { importOptional } from "../../src/internal/optional.ts"

describe("optional packages", () => {
  it.effect("a package that is not installed fails with its name and the command that installs it", () =>
    Effect.gen(function* () {
      const name = "ugent-test-no-such-package"
      const error = yield* Effect.flip(importOptional(name, "Redis (shared rate limits)", () => import(name)))
      assert.strictEqual(
        error.message,
        `Redis (shared rate limits) needs the optional package ${name}: install it with npm install ${name}`
      )
    })
  )

  it.effect("a package that is installed but cannot load is not reported as missing", () =>
    Effect.gen(function* () {
      // A module of an installed package that does not exist: the package is there, the failure is another.
      const error = yield* Effect.flip(
        importOptional("effect", "A feature", () => import(["effect", "no-such-module"].join("/")))
      )
      assert.notInclude(error.message, "needs the optional package")
    })
  )

  it.effect("an installed package loads", () =>
    Effect.gen(function* () {
      const module = yield* importOptional("@effect/sql-pg", "A PostgreSQL store", () => import("@effect/sql-pg"))
      assert.isFunction(module.PgClient.make)
    })
  )
})
