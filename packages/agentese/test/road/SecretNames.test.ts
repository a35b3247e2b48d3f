/**
 * The secret rule names files that hold secrets, not words: a source file or
 * a document about secrets reads, `.env` does not, its templates do; and a
 * recipe adds names that every tool and projection then refuses, without
 * removing the built-in ones.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Invoke, Recipe, Server } from "@ugent/agentese"
import { Effect, Exit } from "effect"
import { ugent, workspace as cliWorkspace } from "../cli/fixture.ts"

const files: Record<string, string> = {
  "src/secretStore.ts": "export const store = new Map()\n",
  "docs/secrets-guide.md": "# Keeping secrets\n",
  ".env": "TOKEN=hunter2\n",
  ".env.example": "TOKEN=\n",
  "data/app.sqlite": "rows-of-users\n",
  "notes.md": "notes\n"
}

const workspace = () => {
  const root = mkdtempSync(join(tmpdir(), "ugent-secret-names-"))
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true })
    writeFileSync(join(root, name), content)
  }
  return root
}

const on = <A, E>(options: Omit<Server.Options, "root">, effect: Effect.Effect<A, E, Server.Services>) =>
  Effect.suspend(() => {
    const root = workspace()
    return effect.pipe(
      Effect.provide(Server.layer({ stores: "memory", ...options, root })),
      Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
    )
  })

const tagOf = (o: Invoke.Outcome) => (o.ok ? "ok" : o.error._tag)
const read = (path: string) => Invoke.invoke({ path: "world.tools.file.read", input: { path } })

describe("secret names", () => {
  it.effect("threat: src/secretStore.ts and docs/secrets-guide.md are Forbidden by name; .env stays refused", () =>
    on(
      {},
      Effect.gen(function* () {
        assert.strictEqual(tagOf(yield* read("src/secretStore.ts")), "ok")
        assert.strictEqual(tagOf(yield* read("docs/secrets-guide.md")), "ok")
        assert.strictEqual(tagOf(yield* read(".env.example")), "ok")
        const env = yield* read(".env")
        assert.strictEqual(tagOf(env), "Forbidden")
        assert.include(!env.ok ? env.error.message : "", "an environment file")
      })
    )
  )

  it.effect("a recipe's blocked names are refused by every file, search and listing tool", () =>
    on(
      { recipe: { blocked: ["*.sqlite"] } },
      Effect.gen(function* () {
        const refused = yield* read("data/app.sqlite")
        assert.strictEqual(tagOf(refused), "BlockedPath")
        assert.include(!refused.ok ? refused.error.message : "", 'rule "*.sqlite"')
        const grep = yield* Invoke.invoke({ path: "world.tools.search.grep", input: { pattern: "rows-of-users" } })
        assert.notInclude(JSON.stringify(grep), "app.sqlite")
        const glob = yield* Invoke.invoke({ path: "world.tools.file.glob", input: { pattern: "**/*" } })
        assert.isTrue(glob.ok, JSON.stringify(glob))
        assert.notInclude(JSON.stringify(glob), "app.sqlite")
        // The built-in names stay: a recipe adds, never removes.
        assert.strictEqual(tagOf(yield* read(".env")), "Forbidden")
        assert.strictEqual(tagOf(yield* read("notes.md")), "ok")
      })
    )
  )

  it("a recipe cannot un-block a built-in name with a negated pattern", () => {
    const exit = Effect.runSyncExit(Recipe.decode({ blocked: ["!.env"] }, "recipe.json"))
    assert.isTrue(Exit.isFailure(exit))
    assert.include(String(exit), "cannot start with !")
  })

  it("the CLI: --recipe's blocked names are refused, a source file about secrets reads", async () => {
    const root = cliWorkspace({ "db.sqlite": "rows\n", "secrets.ts": "export {}\n" })
    writeFileSync(join(root, "recipe.json"), JSON.stringify({ blocked: ["*.sqlite"] }))
    const common = ["--recipe", "recipe.json", "--stores", "memory", "--json"]
    const blocked = await ugent(["invoke", "world.tools.file.read", "--input", '{"path":"db.sqlite"}', ...common], {
      cwd: root
    })
    assert.strictEqual(JSON.parse(blocked.stdout).error._tag, "BlockedPath")
    const source = await ugent(["invoke", "world.tools.file.read", "--input", '{"path":"secrets.ts"}', ...common], {
      cwd: root
    })
    assert.isTrue(JSON.parse(source.stdout).ok, source.stdout)
  }, 60_000)
})
