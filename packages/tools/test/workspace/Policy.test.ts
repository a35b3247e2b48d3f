import { existsSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Secrets } from "@ugent/core"
import { Read, Workspace } from "@ugent/tools"
import { Effect, Schema } from "effect"
import picomatch from "picomatch"
import { withWorkspace } from "./fixture.ts"

const bytes = (s: string) => new TextEncoder().encode(s)

// Fragments that build names near the secret patterns, and path separators.
const pieces = [
  "a",
  "x",
  ".",
  "-",
  "_",
  "env",
  "ENV",
  "example",
  "sample",
  "secret",
  "Pass",
  "word",
  "private",
  "Key",
  "id_rsa",
  "pem",
  "credentials",
  "npmrc",
  "ssh",
  "kube",
  "config",
  "docker",
  "json",
  "git",
  "/"
] as const

const policyOnly = await Effect.runPromise(Workspace.make({ root: tmpdir() }))

describe("Workspace", () => {
  describe("policy", () => {
    it.effect("threat 11 (secrets): .env files, private keys and credential files are blocked", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const secrets = [
            ".env",
            ".env.local",
            "config/.env.production",
            ".ENV",
            "id_rsa",
            "keys/id_ed25519",
            "server.pem",
            "tls/server.KEY",
            "config/secrets.yml",
            "client_secret_123.apps.json",
            "cert.p12",
            ".npmrc",
            ".netrc",
            ".aws/credentials",
            ".git-credentials",
            "home/.ssh/config",
            "vault.kdbx"
          ]
          for (const p of secrets) {
            fx.file(p, "TOKEN=hunter2\n")
            const e = yield* Effect.flip(Workspace.readFile(p))
            assert.strictEqual(e._tag, "BlockedPath", p)
            assert.include(e.message, "never read or written")
            const w = yield* Effect.flip(Workspace.writeFile(p, bytes("x"), { mode: "replace", expectedHash: "" }))
            assert.strictEqual(w._tag, "BlockedPath", p)
          }
          const c = yield* Effect.flip(Workspace.writeFile("new/.env", bytes("x"), { mode: "create" }))
          assert.strictEqual(c._tag, "BlockedPath")
          assert.isFalse(existsSync(fx.at("new/.env")))
        })
      )
    )

    it.effect("threat 11 (secrets): files that hold secrets are blocked, naming the rule", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          for (const [p, rule] of [
            [".env.local", ".env!(.example|.sample|.template)"],
            ["tls/server.key", "*.key"],
            ["config/credentials.yml.enc", "credentials.yml.enc"],
            ["home/.kube/config", "**/.kube/config"],
            [".docker/config.json", "**/.docker/config.json"]
          ] as const) {
            fx.file(p, "hunter2\n")
            const e = yield* Effect.flip(Workspace.readFile(p))
            assert.strictEqual(e._tag, "BlockedPath", p)
            assert.include(e.message, `rule "${rule}"`, p)
            const read = yield* Effect.flip(Read.read.run({ path: p }))
            assert.strictEqual(read._tag, "BlockedPath", p)
          }
        })
      )
    )

    it.prop(
      "one secret list: the workspace blocks a name exactly when core's Secrets names it",
      { parts: Schema.Array(Schema.Literals(pieces)) },
      ({ parts }) => {
        const rel = parts
          .join("")
          .split("/")
          .filter((s) => s !== "" && s !== "." && s !== "..")
          .join("/")
        if (rel === "") return
        const blocked = policyOnly.blockedBy(rel)
        const rule = Secrets.match(rel)?.rule
        const expected = rule === undefined ? undefined : Secrets.globs[Secrets.rules.indexOf(rule)]
        assert.strictEqual(blocked === ".git" || blocked === ".ugent" ? expected : blocked, expected, rel)
      },
      { arbitrary: { runs: 2000 } }
    )

    it.effect("ordinary names that merely resemble secrets are allowed", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          for (const p of [
            "environment.ts",
            "src/keyboard.ts",
            "docs/id.md",
            "monkey.txt",
            "key.ts.md",
            "src/secretStore.ts",
            "docs/secrets-guide.md",
            "src/password.ts",
            "src/privateKey.ts",
            "src/credentials.ts",
            ".env.example",
            "config/.ENV.Sample",
            ".env.template"
          ]) {
            fx.file(p, "ok")
            const f = yield* Workspace.readFile(p)
            assert.strictEqual(Buffer.from(f.bytes).toString(), "ok", p)
          }
        })
      )
    )

    it.effect("threat 5 (deny through symlinks): a link named like a secret is blocked", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("plain.txt", "plain")
          fx.link("plain.txt", ".env")
          const e = yield* Effect.flip(Workspace.readFile(".env"))
          assert.strictEqual(e._tag, "BlockedPath")
        })
      )
    )

    it.effect("threat 5 (deny through symlinks): an innocent link to a secret is blocked by its target", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file(".env", "KEY=1")
          fx.file(".ssh/config", "Host *")
          fx.link(".env", "settings.txt")
          fx.link(".ssh", "k")
          fx.link("../.git/config", "docs/gitconfig")
          fx.file(".git/config", "[core]")
          for (const p of ["settings.txt", "k/config", "docs/gitconfig"]) {
            const e = yield* Effect.flip(Workspace.readFile(p))
            assert.strictEqual(e._tag, "BlockedPath", p)
            assert.strictEqual((e as Workspace.BlockedPath).via, "target", p)
          }
        })
      )
    )

    it.effect("threat 5 (deny through symlinks): a chain through a link named like a secret is blocked", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("data.txt", "data")
          fx.link("data.txt", ".env.hop")
          fx.link(".env.hop", "front.txt")
          const e = yield* Effect.flip(Workspace.readFile("front.txt"))
          assert.strictEqual(e._tag, "BlockedPath")
          assert.strictEqual((e as Workspace.BlockedPath).via, "link")
        })
      )
    )

    it.effect("threat 9 (writes into .git): nothing under .git can be read, created or replaced", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file(".git/config", "[core]\n")
          fx.file(".git/HEAD", "ref: refs/heads/main\n")
          for (const p of [".git/hooks/pre-commit", ".git/refs/heads/main", "sub/.git/hooks/post-checkout", ".git"]) {
            const e = yield* Effect.flip(Workspace.writeFile(p, bytes("#!/bin/sh\nrm -rf ~\n"), { mode: "create" }))
            assert.strictEqual(e._tag, "BlockedPath", p)
          }
          const r = yield* Effect.flip(Workspace.readFile(".git/config"))
          assert.strictEqual(r._tag, "BlockedPath")
          // Through a link to .git too.
          fx.link(".git", "gitdir")
          const l = yield* Effect.flip(Workspace.writeFile("gitdir/hooks/pre-push", bytes("x"), { mode: "create" }))
          assert.strictEqual(l._tag, "BlockedPath")
          assert.isFalse(existsSync(fx.at(".git/hooks/pre-push")))
          assert.isFalse(existsSync(fx.at(".git/hooks/pre-commit")))
          assert.strictEqual(readFileSync(fx.at(".git/HEAD"), "utf8"), "ref: refs/heads/main\n")
        })
      )
    )

    it.effect("extra blocked patterns add to the defaults, which stay", () =>
      withWorkspace(
        (fx) =>
          Effect.gen(function* () {
            fx.file("db.sqlite", "x")
            fx.file("config/prod/app.yaml", "x")
            fx.file(".env", "x")
            for (const p of ["db.sqlite", "config/prod/app.yaml", ".env"]) {
              const e = yield* Effect.flip(Workspace.readFile(p))
              assert.strictEqual(e._tag, "BlockedPath", p)
            }
          }),
        { policy: { blocked: ["*.sqlite", "config/prod/**"] } }
      )
    )

    it.effect("writable globs decide isWritable; blocked names are never writable", () =>
      withWorkspace(
        () =>
          Effect.gen(function* () {
            const ws = yield* Workspace.Workspace
            assert.isTrue(ws.isWritable("src/a.ts"))
            assert.isTrue(ws.isWritable("src/.hidden/a.ts"))
            assert.isFalse(ws.isWritable("README.md"))
            assert.isFalse(ws.isWritable("src/.env"))
            assert.isFalse(ws.isWritable("."))
          }),
        { policy: { writable: ["src/**"] } }
      )
    )

    it.effect("ignored names are segments: node_modules anywhere, not node_modules_x", () =>
      withWorkspace(() =>
        Effect.gen(function* () {
          const ws = yield* Workspace.Workspace
          assert.isTrue(ws.isIgnored("node_modules"))
          assert.isTrue(ws.isIgnored("a/node_modules/b.js"))
          assert.isTrue(ws.isIgnored("dist/x.js"))
          assert.isFalse(ws.isIgnored("node_modules_x/a.js"))
          assert.isFalse(ws.isIgnored("src/distance.ts"))
        })
      )
    )

    it.effect("blocked verdicts agree with picomatch on every default pattern", () =>
      withWorkspace(() =>
        Effect.gen(function* () {
          const ws = yield* Workspace.Workspace
          const names = [
            ".env",
            ".ENV.local",
            ".envrc",
            "env",
            "my.env",
            "secret",
            ".Secret",
            "top-SECRET-plan.md",
            "secre",
            "id_rsa",
            "id_rsa.pub",
            "xid_rsa",
            "cert.pem",
            ".pem",
            "pem",
            "a.PEM.bak",
            "server.key",
            "keys",
            "monkey",
            "credentials",
            "credentials.json",
            "credentials2",
            ".git",
            ".gitignore",
            "git",
            ".npmrc",
            "x.npmrc",
            "a.kdbx",
            ".ssh",
            ".gnupg",
            "ok.ts"
          ]
          for (const name of names) {
            const expected = Workspace.defaultBlocked.find((p) =>
              picomatch.isMatch(name, p, { dot: true, nocase: true })
            )
            assert.strictEqual(ws.blockedBy(name), expected, name)
            assert.strictEqual(ws.blockedBy(`dir/${name}`), expected, `dir/${name}`)
            assert.strictEqual(ws.blockedBy(`${name}/inner.txt`), expected, `${name}/inner.txt`)
          }
        })
      )
    )

    it.effect("the default policy blocks case-insensitively and exposes its rule", () =>
      withWorkspace(() =>
        Effect.gen(function* () {
          const ws = yield* Workspace.Workspace
          assert.strictEqual(ws.blockedBy("a/.Env.Local"), ".env!(.example|.sample|.template)")
          assert.isUndefined(ws.blockedBy("a/.Env.Example"))
          assert.strictEqual(ws.blockedBy("a/b/.git/config"), ".git")
          assert.isUndefined(ws.blockedBy("a/.gitignore"))
          assert.isUndefined(ws.blockedBy("."))
          assert.strictEqual(ws.relative(join(ws.root, "a", "b")), "a/b")
          assert.isUndefined(ws.relative(`${ws.root}_evil/a`))
        })
      )
    )
  })
})
