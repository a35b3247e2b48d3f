import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Sandbox, SystemBash, System, Workspace } from "@ugent/tools"
import { Effect, Fiber, Schema } from "effect"
import { bash, cleanup, kill, output, processesWith, sandboxGate, withSandbox, workspace } from "./fixtures.ts"

const gate = sandboxGate()
afterAll(cleanup)

describe.skipIf(gate.skip)(`system.bash${gate.note}`, () => {
  describe("results", () => {
    it("returns the exit code, stdout and stderr apart, and the duration; a non-zero exit is a result", async () => {
      const ws = workspace()
      const run = await withSandbox(ws.root, bash.run({ command: "echo out; echo err >&2; printf 'é✓'; exit 3" }))
      expect(run).toMatchObject({ status: "exited", exitCode: 3, stdout: "out\né✓", stderr: "err\n" })
      expect(run.timedOut).toBe(false)
      expect(run.truncated).toBe(false)
      expect(run.sandbox).toBe("bubblewrap")
      expect(run.durationMillis).toBeGreaterThanOrEqual(0)
      expect(run.id).toMatch(/^run-[0-9a-f]{8}$/)
    })

    it("the result encodes with the tool's output schema", async () => {
      const ws = workspace()
      const run = await withSandbox(ws.root, bash.run({ command: "true" }))
      expect(Schema.decodeUnknownSync(SystemBash.Output)(Schema.encodeSync(SystemBash.Output)(run))).toEqual(run)
    })

    it("writes land in the workspace; /tmp and HOME are private to each call", async () => {
      const ws = workspace()
      const first = await withSandbox(
        ws.root,
        bash.run({ command: "echo made > made.txt && echo kept > /tmp/x && echo $HOME && cat /tmp/x" })
      )
      expect(first.stdout).toBe("/tmp\nkept\n")
      expect(fs.readFileSync(path.join(ws.root, "made.txt"), "utf8")).toBe("made\n")
      const second = await withSandbox(ws.root, bash.run({ command: "cat /tmp/x 2>&1; true" }))
      expect(second.stdout).toMatch(/No such file/)
    })

    it("git reads work on the read-only repository; writes to it fail", async () => {
      const ws = workspace()
      const run = await withSandbox(
        ws.root,
        bash.run({
          command: "git log --format=%s && git status --short .env; git commit --allow-empty -qm x 2>&1; true"
        })
      )
      expect(run.stdout).toMatch(/^init\n/)
      expect(run.stdout).toMatch(/Read-only file system/)
    })

    it("runs in a sub-directory given as cwd, and refuses one outside, blocked or missing", async () => {
      const ws = workspace()
      fs.mkdirSync(path.join(ws.root, "sub"))
      fs.symlinkSync("/etc", path.join(ws.root, "etc-link"))
      const run = await withSandbox(ws.root, bash.run({ command: "pwd", cwd: "sub" }))
      expect(run.stdout).toBe(`${path.join(ws.root, "sub")}\n`)
      const failures = await withSandbox(
        ws.root,
        Effect.all(
          ["..", "/etc", "etc-link", ".git", "nope"].map((cwd) =>
            Effect.map(Effect.flip(bash.run({ command: "pwd", cwd })), (e) => e._tag)
          )
        )
      )
      expect(failures).toEqual(["OutsideWorkspace", "OutsideWorkspace", "OutsideWorkspace", "BlockedPath", "NotFound"])
    })

    it("refuses a time limit out of range", async () => {
      const ws = workspace()
      const error = await withSandbox(ws.root, Effect.flip(bash.run({ command: "true", timeoutSeconds: 601 })))
      expect(error._tag).toBe("InvalidInput")
      expect(error.message).toMatch(/from 1 to 600/)
      expect(Schema.decodeUnknownOption(SystemBash.Input)({ command: "true", timeoutSeconds: 601 })._tag).toBe("None")
      expect(Schema.decodeUnknownOption(SystemBash.Input)({ command: "" })._tag).toBe("None")
    })

    it("refuses a NUL character in the command line, in the input and in the sandbox", async () => {
      const ws = workspace()
      const decoded = Schema.decodeUnknownExit(SystemBash.Input)({ command: "echo a\u0000echo b" })
      expect(String(decoded)).toMatch(/cannot contain a NUL character/)
      const error = await withSandbox(ws.root, Effect.flip(bash.run({ command: "echo a\u0000echo b" })))
      expect(error._tag).toBe("SandboxFailed")
      const direct = await withSandbox(
        ws.root,
        Effect.flip(
          Effect.flatMap(Sandbox.Sandbox, (s) => s.run({ command: "echo a\u0000b", cwd: ws.root, timeoutMillis: 5000 }))
        )
      )
      expect(direct._tag).toBe("SandboxFailed")
    })
  })

  describe("a run's process started ahead (hosts where runs join a pids control group)", () => {
    it("decides nothing before the run: a secret made, a file written and a directory chosen after it started all hold", async (ctx) => {
      const ws = workspace()
      fs.mkdirSync(path.join(ws.root, "sub"))
      const views = await withSandbox(
        ws.root,
        Effect.gen(function* () {
          const isolation = (yield* Sandbox.Sandbox).isolation
          if (isolation.processLimit !== "cgroup") return undefined
          yield* bash.run({ command: "true" })
          // The next run's process is waiting now; what follows happens after it started.
          yield* Effect.sleep("100 millis")
          fs.writeFileSync(path.join(ws.root, "sub", ".env"), "TOKEN=made-later\n")
          fs.writeFileSync(path.join(ws.root, "sub", "notes.txt"), "written later\n")
          const second = yield* bash.run({ command: 'pwd; cat notes.txt .env; echo "[$UGENT_COMMAND]"', cwd: "sub" })
          const third = yield* bash.run({ command: 'echo third; printf %s "$0"' })
          return [second, third] as const
        })
      )
      if (views === undefined) {
        ctx.skip("runs join no pids control group on this host (it does when the server runs as root)")
        return
      }
      const [second, third] = views
      expect(second.stdout).toBe(`${path.join(ws.root, "sub")}\nwritten later\n[]\n`)
      expect(third.stdout).toBe("third\n/bin/bash")
    })

    it("closing the sandbox leaves no process waiting for a run", async () => {
      const ws = workspace()
      const waiting = () =>
        fs
          .readdirSync("/proc")
          .filter((entry) => /^\d+$/.test(entry))
          .filter((entry) => {
            try {
              const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
              const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
              return ppid === process.pid && fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("--args")
            } catch {
              return false
            }
          })
      const during = await withSandbox(
        ws.root,
        Effect.gen(function* () {
          yield* bash.run({ command: "true" })
          yield* Effect.sleep("200 millis")
          return { cgroup: (yield* Sandbox.Sandbox).isolation.processLimit === "cgroup", waiting: waiting().length }
        })
      )
      if (during.cgroup) expect(during.waiting).toBe(1)
      expect(waiting()).toEqual([])
    })
  })

  describe("output limit", () => {
    it("keeps the head and the tail of a long output, with a note of what was cut, within 30,000 characters", async () => {
      const ws = workspace()
      const run = await withSandbox(ws.root, bash.run({ command: "seq 1 100000" }))
      expect(run.truncated).toBe(true)
      expect(run.stdout.length).toBeLessThanOrEqual(30_000)
      expect(run.stdout.startsWith("1\n2\n3\n")).toBe(true)
      expect(run.stdout.endsWith("99999\n100000\n")).toBe(true)
      const note = /\n\[… (\d+) characters cut from the middle of stdout: [^\]]*…\]\n/.exec(run.stdout)
      expect(note).not.toBeNull()
      // 588,895 characters in all: what is shown and what was cut add up.
      const shown = run.stdout.length - note![0].length
      expect(Number(note![1]) + shown).toBe(588_895)
    })

    it("shares the limit between the streams, keeping a third for stderr", async () => {
      const ws = workspace()
      const run = await withSandbox(ws.root, bash.run({ command: "seq 1 100000; seq 1 100000 >&2" }))
      expect(run.stdout.length + run.stderr.length).toBeLessThanOrEqual(30_000)
      expect(run.stderr.length).toBeGreaterThanOrEqual(10_000)
      expect(run.stderr.endsWith("100000\n")).toBe(true)
    })
  })

  describe("background runs", () => {
    it("returns an id at once; system.output reads it as it goes and when it is done", async () => {
      const ws = workspace()
      const [started, middle, done] = await withSandbox(
        ws.root,
        Effect.gen(function* () {
          const started = yield* bash.run({ command: "echo one; sleep 1; echo two", background: true })
          yield* Effect.sleep("500 millis")
          const middle = yield* output.run({ id: started.id })
          yield* Effect.sleep("1500 millis")
          const done = yield* output.run({ id: started.id })
          return [started, middle, done] as const
        })
      )
      expect(started).toMatchObject({ status: "running", background: true, exitCode: null })
      expect(middle).toMatchObject({ status: "running", stdout: "one\n" })
      expect(done).toMatchObject({ status: "exited", exitCode: 0, stdout: "one\ntwo\n" })
    })

    it("a background run ends at its time limit", async () => {
      const ws = workspace()
      const done = await withSandbox(
        ws.root,
        Effect.gen(function* () {
          const started = yield* bash.run({ command: "echo a; sleep 30", background: true, timeoutSeconds: 1 })
          yield* Effect.sleep("2 seconds")
          return yield* output.run({ id: started.id })
        })
      )
      expect(done).toMatchObject({ status: "timed-out", timedOut: true, stdout: "a\n" })
    })

    it("refuses more background runs than the limit, and counts only those still running", async () => {
      const ws = workspace()
      const tags = await withSandbox(
        ws.root,
        Effect.gen(function* () {
          const a = yield* bash.run({ command: "sleep 30", background: true })
          yield* bash.run({ command: "sleep 30", background: true })
          const third = yield* Effect.flip(bash.run({ command: "sleep 30", background: true }))
          yield* kill.run({ id: a.id })
          const fourth = yield* bash.run({ command: "true", background: true })
          return [third._tag, third.message, fourth.status]
        }),
        { limits: { backgroundRuns: 2 } }
      )
      expect(tags[0]).toBe("TooManyRuns")
      expect(tags[1]).toMatch(/system.kill/)
      expect(tags[2]).toBe("running")
    })

    it("system.output and system.kill know only ids this server started", async () => {
      const ws = workspace()
      const errors = await withSandbox(
        ws.root,
        Effect.all([Effect.flip(output.run({ id: "run-deadbeef" })), Effect.flip(kill.run({ id: "1" }))])
      )
      expect(errors.map((e) => e._tag)).toEqual(["UnknownRun", "UnknownRun"])
    })

    it("killing a run that has ended returns it as it ended", async () => {
      const ws = workspace()
      const killed = await withSandbox(
        ws.root,
        Effect.gen(function* () {
          const run = yield* bash.run({ command: "echo done" })
          return yield* kill.run({ id: run.id })
        })
      )
      expect(killed).toMatchObject({ status: "exited", exitCode: 0, stdout: "done\n" })
    })
  })

  it("a caller that gives up (interruption) kills its foreground run", async () => {
    const ws = workspace()
    const marker = `5${Math.floor(Math.random() * 1e6)}`
    await withSandbox(
      ws.root,
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(bash.run({ command: `sleep ${marker}` }))
        yield* Effect.sleep("500 millis")
        expect(processesWith(`sleep ${marker}`).length).toBeGreaterThan(0)
        yield* Fiber.interrupt(fiber)
        expect(processesWith(`sleep ${marker}`)).toEqual([])
      })
    )
  })
})

describe.skipIf(gate.skip)(`System.family${gate.note}`, () => {
  it("serves the three tools under world.tools and tells a run in a sentence", async () => {
    const ws = workspace()
    const members = await Effect.runPromise(
      Effect.scoped(System.family().build.pipe(Effect.provide(Workspace.layer({ root: ws.root }))))
    )
    expect(System.family().prefix).toBe("world.tools")
    expect(Object.keys(members)).toEqual(["system.bash", "system.output", "system.kill"])
    const run = await withSandbox(ws.root, bash.run({ command: "seq 1 3; echo oops >&2; exit 1" }))
    expect(members["system.bash"]!.present!(run, { command: "x" }).summary).toBe(
      `${run.id} exited with 1 after ${run.durationMillis} ms: 3 lines of stdout, 1 of stderr`
    )
  })
})

describe("SystemBash.requiredLevel", () => {
  const allowance = { level: 1, commands: ["git status", "git diff *", "npm test", "ls *"] } as const

  it("lowers plain lines whose every command is listed", () => {
    for (const command of [
      "git status",
      "git diff --stat HEAD~1",
      "npm test && git status",
      "ls -la src | ls",
      "ls 'a b'"
    ]) {
      expect(SystemBash.requiredLevel({ command }, allowance), command).toBe(1)
    }
  })

  it("keeps L3 for anything not plain or not listed", () => {
    for (const command of [
      "git status --porcelain=v2 && git push",
      "npm test -- --watch",
      "ls $(id)",
      "ls `id`",
      'ls "$HOME"',
      "ls ~",
      "ls *.ts",
      "ls > out",
      "ls &",
      "ls\nid",
      "ls; ",
      "ls # comment",
      "LS_COLORS=x ls",
      "ls {a,b}",
      "ls \\; id",
      "(ls)",
      "ls 'unterminated"
    ]) {
      expect(SystemBash.requiredLevel({ command }, allowance), command).toBe(3)
    }
    expect(SystemBash.requiredLevel({ command: "git status", background: true }, allowance)).toBe(3)
    expect(SystemBash.requiredLevel({ command: "git status" }, undefined)).toBe(3)
  })

  it("never lowers below L1: every command may write the workspace", () => {
    expect(SystemBash.requiredLevel({ command: "git status" }, { level: 1, commands: ["git status"] })).toBe(1)
  })
})
