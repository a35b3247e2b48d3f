import { assert, describe, it } from "@effect/vitest"
import { Secrets, Trust } from "@ugent/core"
import { Effect } from "effect"

describe("Secrets", () => {
  describe("match", () => {
    it("covers environment files but not their templates, and .git/config", () => {
      const cases: ReadonlyArray<readonly [string, string]> = [
        [".env", ".env*"],
        [".env.local", ".env*"],
        [".envrc", ".env*"],
        [".env.example.local", ".env*"],
        ["config/.ENV.production", ".env*"],
        [".git/config", "**/.git/config"],
        ["vendor/lib/.git/config", "**/.git/config"]
      ]
      for (const [path, pattern] of cases) assert.strictEqual(Secrets.match(path)?.rule.pattern, pattern, path)
      for (const path of [".env.example", "config/.ENV.Sample", ".env.template"]) {
        assert.isUndefined(Secrets.match(path), path)
      }
    })

    it("covers private keys and credential stores", () => {
      for (const path of [
        "home/.ssh/id_rsa",
        "id_ed25519.pub",
        "tls/server.pem",
        "tls/server.KEY",
        "AuthKey_ABC.p8",
        "store.p12",
        "vault.kdbx",
        ".netrc",
        "_netrc",
        ".npmrc",
        ".pypirc",
        ".pgpass",
        ".git-credentials",
        ".aws/credentials",
        "gcloud/credentials.json",
        "config/credentials.yml.enc",
        "config/secrets.yml",
        "client_secret_123.apps.googleusercontent.com.json",
        ".vault-token",
        ".s3cfg",
        "home/.docker/config.json",
        ".kube/config"
      ]) {
        assert.isTrue(Secrets.isSecret(path), path)
      }
    })

    it("leaves ordinary names alone", () => {
      for (const path of [
        "src/index.ts",
        "environment.ts",
        "src/keyboard.ts",
        "monkey.txt",
        "docs/private.md",
        "keys.md",
        "config/settings.json",
        "docker/config.json",
        "kube/config",
        ".git/HEAD.txt",
        ".gitignore",
        "",
        // Source files and documents are read for what they are, not refused for a word in their name.
        "src/secretStore.ts",
        "docs/secrets-guide.md",
        "src/secrets.ts",
        "password.ts",
        "src/privateKey.ts",
        "src/credentials.ts"
      ]) {
        assert.isUndefined(Secrets.match(path), path)
      }
    })

    it("reads backslashes as separators and ignores `.` segments", () => {
      assert.strictEqual(Secrets.match("a\\b\\.env")?.name, ".env")
      assert.strictEqual(Secrets.match("./.kube/./config")?.name, ".kube/config")
    })

    it("every pattern is a segment glob or `**/` and literal segments", () => {
      for (const p of Secrets.patterns) {
        if (p.startsWith("**/")) assert.notMatch(p.slice(3), /[*?[\]{}!]/, p)
        else assert.notInclude(p, "/", p)
      }
    })
  })

  describe("the forbidden rule of Trust", () => {
    it.effect("refuses what the list names, and says which pattern", () =>
      Effect.gen(function* () {
        for (const path of [".env", "notes/.env.production", "keys/deploy.pem"]) {
          const e = yield* Effect.flip(Trust.checkForbidden("file.read", { path }))
          assert.strictEqual(e.rule, "secrets", path)
          assert.include(e.message, `pattern "${Secrets.match(path)?.rule.pattern}"`, path)
        }
      })
    )
  })
})
