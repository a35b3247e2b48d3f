import { execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Workspace } from "@ugent/tools"
import { Effect } from "effect"
import { withWorkspace } from "./fixture.ts"

describe("Workspace", () => {
  describe("readFile", () => {
    it.effect("threat 12 (not a regular file): a FIFO is refused without blocking", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          execFileSync("mkfifo", [fx.at("pipe")])
          const e = yield* Effect.flip(Workspace.readFile("pipe"))
          assert.strictEqual(e._tag, "NotAFile")
          assert.strictEqual((e as Workspace.NotAFile).kind, "fifo")
          assert.include(e.message, "not a regular file")
        })
      )
    )

    it.effect("threat 12: a FIFO slipped in after the check is still refused (O_NONBLOCK, then fstat)", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          execFileSync("mkfifo", [fx.at("late-pipe")])
          const ws = yield* Workspace.Workspace
          // The path as it was when checked: a regular file. It is a FIFO by the time it is opened.
          const checked: Workspace.ResolvedPath = {
            input: "late-pipe",
            real: fx.at("late-pipe"),
            relative: "late-pipe",
            kind: "file"
          }
          const e = yield* Effect.flip(ws.readFile(checked))
          assert.strictEqual(e._tag, "NotAFile")
        })
      )
    )

    it.effect("threat 12: a link to /dev/zero is refused (it leads outside) and never read", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.link("/dev/zero", "zeros")
          fx.link("/dev/urandom", "noise")
          for (const p of ["zeros", "noise"]) {
            const e = yield* Effect.flip(Workspace.readFile(p))
            assert.strictEqual(e._tag, "OutsideWorkspace", p)
          }
        })
      )
    )

    it.effect("threat 12: character devices inside the workspace are refused by kind", () =>
      Effect.gen(function* () {
        // A workspace rooted at /dev holds devices without needing mknod.
        for (const p of ["zero", "urandom", "null"]) {
          const e = yield* Effect.flip(Workspace.readFile(p)).pipe(Effect.provide(Workspace.layer({ root: "/dev" })))
          assert.strictEqual(e._tag, "NotAFile", p)
          assert.strictEqual((e as Workspace.NotAFile).kind, "character-device", p)
        }
      })
    )

    it.effect("threat 12: a Unix socket is refused", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const server = createServer()
          yield* Effect.acquireRelease(
            Effect.promise(() => new Promise<void>((resolve) => server.listen(fx.at("sock"), resolve))),
            () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
          )
          const e = yield* Effect.flip(Workspace.readFile("sock"))
          assert.strictEqual(e._tag, "NotAFile")
          assert.strictEqual((e as Workspace.NotAFile).kind, "socket")
        })
      )
    )

    it.effect("a directory is NotAFile with a hint to list it", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.dir("src")
          const e = yield* Effect.flip(Workspace.readFile("src"))
          assert.strictEqual(e._tag, "NotAFile")
          assert.include(e.message, "file.list")
        })
      )
    )

    it.effect("threat 12 (size limit): a file over the limit is refused from its size, without reading", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("big.txt", "a".repeat(1_048_577))
          const e = yield* Effect.flip(Workspace.readFile("big.txt"))
          assert.strictEqual(e._tag, "FileTooLarge")
          assert.strictEqual((e as Workspace.FileTooLarge).limit, 1_048_576)
          fx.file("exact.txt", "a".repeat(1_048_576))
          const ok = yield* Workspace.readFile("exact.txt")
          assert.strictEqual(ok.bytes.length, 1_048_576)
        })
      )
    )

    it.live("threat 12 (size limit): a file growing while it is read never yields more than the limit", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const path = fx.file("growing.log", "start\n")
          // Another process appends as fast as it can while we read.
          const writer = spawn(process.execPath, [
            "-e",
            `const fs = require("fs"); const line = "x".repeat(4095) + "\\n"; for (;;) fs.appendFileSync(${JSON.stringify(path)}, line)`
          ])
          yield* Effect.addFinalizer(() => Effect.sync(() => writer.kill("SIGKILL")))
          const limit = 256 * 1024
          let tooLarge = 0
          // Reads go on until the file outgrew the limit (the writer may start slowly on a loaded machine).
          for (let i = 0; i < 200 || (tooLarge === 0 && i < 200_000); i++) {
            const r = yield* Effect.result(Workspace.readFile("growing.log", { maxBytes: limit }))
            if (r._tag === "Success") assert.isAtMost(r.success.bytes.length, limit)
            else {
              assert.strictEqual(r.failure._tag, "FileTooLarge")
              tooLarge++
            }
          }
          assert.isAbove(tooLarge, 0)
        })
      )
    )

    it.effect("binary: a NUL byte in the first 8 KB is BinaryFile", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const buf = Buffer.alloc(100_000, 0x61)
          buf[5000] = 0
          fx.file("image.bin", buf)
          const e = yield* Effect.flip(Workspace.readFile("image.bin"))
          assert.strictEqual(e._tag, "BinaryFile")
          assert.strictEqual((e as Workspace.BinaryFile).reason, "nul-byte")
          // Asked for bytes, not text, the same file reads.
          const raw = yield* Workspace.readFile("image.bin", { text: false })
          assert.strictEqual(raw.bytes.length, 100_000)
        })
      )
    )

    it.effect("binary: invalid UTF-8 at the start or after the first 8 KB is BinaryFile", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
          const late = Buffer.concat([Buffer.alloc(20_000, 0x61), Buffer.from([0xff, 0xfe])])
          fx.file("late.txt", late)
          for (const p of ["latin1.txt", "late.txt"]) {
            const e = yield* Effect.flip(Workspace.readFile(p))
            assert.strictEqual(e._tag, "BinaryFile", p)
            assert.strictEqual((e as Workspace.BinaryFile).reason, "invalid-utf8", p)
          }
        })
      )
    )

    it.effect("binary: a multi-byte character across the 8 KB boundary is text", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          for (const pad of [8190, 8191, 8189]) {
            // "€" is three bytes: placed so it straddles byte 8192.
            const content = `${"a".repeat(pad)}€ and more €\n`
            fx.file(`straddle-${pad}.txt`, content)
            const f = yield* Workspace.readFile(`straddle-${pad}.txt`)
            assert.strictEqual(Buffer.from(f.bytes).toString("utf8"), content)
          }
        })
      )
    )

    it.effect("an empty file reads as zero bytes", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("empty.txt", "")
          const f = yield* Workspace.readFile("empty.txt")
          assert.strictEqual(f.bytes.length, 0)
        })
      )
    )
  })

  describe("writeFile", () => {
    const enc = (s: string) => new TextEncoder().encode(s)

    it.effect("threat 12: a FIFO, a socket or a directory is never written", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          execFileSync("mkfifo", [fx.at("pipe")])
          fx.dir("dir")
          for (const [p, kind] of [
            ["pipe", "fifo"],
            ["dir", "directory"]
          ] as const) {
            const e = yield* Effect.flip(Workspace.writeFile(p, enc("x"), { mode: "replace", expectedHash: "" }))
            assert.strictEqual(e._tag, "NotAFile", p)
            assert.strictEqual((e as Workspace.NotAFile).kind, kind, p)
          }
          const ws = yield* Workspace.Workspace
          // A FIFO slipped in after the check: the hash check opens it with O_NONBLOCK and refuses it by fstat.
          const checked: Workspace.ResolvedPath = { input: "pipe", real: fx.at("pipe"), relative: "pipe", kind: "file" }
          const late = yield* Effect.flip(ws.writeFile(checked, enc("x"), { mode: "replace", expectedHash: "" }))
          assert.strictEqual(late._tag, "NotAFile")
        })
      )
    )

    it.effect("creates missing parent directories inside the root", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const w = yield* Workspace.writeFile("a/b/c/new.txt", enc("new"), { mode: "create" })
          assert.strictEqual(w.relative, "a/b/c/new.txt")
          assert.isTrue(existsSync(fx.at("a/b/c/new.txt")))
        })
      )
    )

    it.effect("create is exclusive", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("there.txt", "old")
          const ws = yield* Workspace.Workspace
          // Resolved while missing, then created by someone else: the create still refuses.
          const checked = yield* ws.resolveForWrite("race.txt")
          writeFileSync(fx.at("race.txt"), "someone else")
          const e = yield* Effect.flip(ws.writeFile(checked, enc("mine"), { mode: "create" }))
          assert.strictEqual(e._tag, "AlreadyExists")
          const e2 = yield* Effect.flip(ws.writeFile("there.txt", enc("mine"), { mode: "create" }))
          assert.strictEqual(e2._tag, "AlreadyExists")
        })
      )
    )

    it.effect("replace refuses when the bytes on disk no longer hash to the expected hash, and leaves them", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("f.txt", "one")
          const e = yield* Effect.flip(
            Workspace.writeFile("f.txt", enc("two"), { mode: "replace", expectedHash: "0".repeat(64) })
          )
          assert.strictEqual(e._tag, "ProofRejected")
          assert.strictEqual(readFileSync(fx.at("f.txt"), "utf8"), "one")
        })
      )
    )

    it.effect("a failed write leaves no temporary file behind", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("f.txt", "one")
          yield* Effect.flip(Workspace.writeFile("f.txt", enc("two"), { mode: "replace", expectedHash: "x" }))
          yield* Workspace.writeFile("g.txt", enc("g"), { mode: "create" })
          const names = execFileSync("ls", ["-A", fx.root]).toString().trim().split("\n")
          assert.deepStrictEqual(names.sort(), ["f.txt", "g.txt"])
        })
      )
    )

    it.effect("replace keeps the file's permission bits", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("run.sh", "#!/bin/sh\n")
          execFileSync("chmod", ["750", fx.at("run.sh")])
          const ws = yield* Workspace.Workspace
          const current = yield* ws.readFile("run.sh")
          yield* ws.writeFile("run.sh", enc("#!/bin/sh\necho hi\n"), {
            mode: "replace",
            expectedHash: createHash("sha256").update(current.bytes).digest("hex")
          })
          const mode = execFileSync("stat", ["-c", "%a", fx.at("run.sh")])
            .toString()
            .trim()
          assert.strictEqual(mode, "750")
        })
      )
    )

    it.effect("a ResolvedPath forged to point outside is refused when its directory is opened", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const ws = yield* Workspace.Workspace
          const forged: Workspace.ResolvedPath = {
            input: "x.txt",
            real: join(fx.outside, "planted.txt"),
            relative: "x.txt",
            kind: "missing"
          }
          const e = yield* Effect.flip(ws.writeFile(forged, enc("planted"), { mode: "create" }))
          assert.strictEqual(e._tag, "OutsideWorkspace")
          assert.isFalse(existsSync(join(fx.outside, "planted.txt")))
          const r = yield* Effect.flip(ws.readFile({ ...forged, real: join(fx.outside, "data.txt"), kind: "file" }))
          assert.strictEqual(r._tag, "OutsideWorkspace")
        })
      )
    )
  })

  describe("list", () => {
    it.effect("lists one level; links say where they lead and are not followed out", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("a.txt", "a")
          fx.file("sub/b.txt", "b")
          fx.link(fx.outside, "out")
          fx.link("a.txt", "alias")
          fx.link("missing", "broken")
          const entries = yield* Workspace.list(".")
          const byName = Object.fromEntries(entries.map((e) => [e.name, e]))
          assert.deepStrictEqual(Object.keys(byName).sort(), ["a.txt", "alias", "broken", "out", "sub"])
          assert.strictEqual(byName.out!.link, "outside")
          assert.strictEqual(byName.out!.kind, "symlink")
          assert.strictEqual(byName.alias!.link, "inside")
          assert.strictEqual(byName.alias!.kind, "file")
          assert.strictEqual(byName.broken!.link, "broken")
          assert.strictEqual(byName.sub!.kind, "directory")
          const e = yield* Effect.flip(Workspace.list("out"))
          assert.strictEqual(e._tag, "OutsideWorkspace")
        })
      )
    )
  })
})
