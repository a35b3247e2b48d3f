/**
 * threats.md §Shell (19-23) and 39, each as tests of `system.bash` with the
 * real sandbox (bubblewrap) and real processes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SystemBash, Sandbox, System, Workspace } from "@ugent/tools"
import { Sandboxed } from "@ugent/wrappers"
import { NodeServices } from "@effect/platform-node"
import { Effect, Schema } from "effect"
import { payloads, spellings } from "./bypasses.ts"
import {
  bash,
  cleanup,
  kill,
  loopbackServer,
  outside,
  output,
  own,
  processesWith,
  sandboxGate,
  scratch,
  snapshot,
  testOwner,
  token,
  withSandbox,
  workspace
} from "./fixtures.ts"

const gate = sandboxGate()
afterAll(cleanup)

/** Secrets in the server's environment that a child must never see. */
const secretEnv: Record<string, string> = {
  MYSQL_PWD: token("mysql"),
  PGPASS: token("pgpass"),
  REDIS_URL: `redis://:${token("redis")}@cache.internal:6379/0`,
  STRIPE_KEY: `sk_live_${token("stripe")}`,
  NOTIFY_HOOK: `https://hooks.slack.com/services/T000/B000/${token("hook")}`,
  DEPLOY_TOKEN: "0123456789abcdef0123456789abcdef0123456789".slice(0, 40).replace(/^0/, "f"),
  OPENAI_API_KEY: `sk-${token("openai")}`
}

const hostPasswd = fs.existsSync("/etc/passwd") ? fs.readFileSync("/etc/passwd", "utf8") : ""
/** A line of the host's /etc/passwd the sandbox's synthetic one does not have. */
const hostOnlyLine = hostPasswd.split("\n").find((l) => l !== "" && !/^(root|sandbox|nobody):/.test(l))
const hostsBefore = fs.existsSync("/etc/hosts") ? fs.readFileSync("/etc/hosts", "utf8") : ""

/** The script each re-spelling runs: it tries every harm a payload could do from the workspace. */
const payloadScript = (out: string, port: number) =>
  [
    `touch ${out}/pwned 2>/dev/null`,
    `mkdir ${out}/pwned-dir 2>/dev/null`,
    `cat ${out}/secret.txt /etc/shadow /root/.bashrc /root/.profile > leaked.txt 2>/dev/null`,
    "cat /etc/passwd .env config/server.key .ugent/proof.key >> leaked.txt 2>/dev/null",
    `(echo hello > /dev/tcp/127.0.0.1/${port}) 2>/dev/null`,
    `(echo hello > /dev/tcp/localhost/${port}) 2>/dev/null`,
    "echo '[core]' >> .git/config 2>/dev/null",
    "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit 2>/dev/null",
    "echo planted > .ugent/planted 2>/dev/null",
    "env > env.txt",
    "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' >> env.txt",
    "echo ran >> ran.txt",
    ""
  ].join("\n")

const read = (p: string) => (fs.existsSync(p) ? fs.readFileSync(p, "utf8") : "")

describe.skipIf(gate.skip)(`threats.md §Shell (19-23, 39)${gate.note}`, () => {
  beforeAll(() => {
    Object.assign(process.env, secretEnv)
  })
  afterAll(() => {
    for (const name of Object.keys(secretEnv)) delete process.env[name]
  })

  describe("39. shell text re-spelled past a text policy: the kernel contains what the text hides", () => {
    for (const payload of payloads) {
      it(`threat 39: ${payload.name} (${payload.reported}) runs its payload, which writes, reads and connects nothing outside`, async () => {
        const ws = workspace()
        const out = outside()
        const server = await loopbackServer()
        try {
          fs.writeFileSync(path.join(ws.root, "p.sh"), payloadScript(out.dir, server.port))
          const outsideBefore = snapshot(out.dir)
          const gitBefore = snapshot(path.join(ws.root, ".git"))
          const stateBefore = snapshot(path.join(ws.root, ".ugent"))
          const run = await withSandbox(
            ws.root,
            bash.run({ command: payload.command("bash p.sh"), timeoutSeconds: 20 })
          )
          // The re-spelling did run the payload: the sandbox, not a parser, is what held.
          expect(read(path.join(ws.root, "ran.txt"))).toContain("ran")
          expect(snapshot(out.dir)).toEqual(outsideBefore)
          expect(snapshot(path.join(ws.root, ".git"))).toEqual(gitBefore)
          expect(snapshot(path.join(ws.root, ".ugent"))).toEqual(stateBefore)
          expect(read("/etc/hosts")).toBe(hostsBefore)
          const leaked = read(path.join(ws.root, "leaked.txt")) + run.stdout + run.stderr
          expect(leaked).not.toContain(out.secret)
          for (const secret of ws.secrets) expect(leaked).not.toContain(secret)
          if (hostOnlyLine !== undefined) expect(leaked).not.toContain(hostOnlyLine)
          const env = read(path.join(ws.root, "env.txt"))
          expect(env).toContain("PATH=")
          for (const value of Object.values(secretEnv)) expect(env).not.toContain(value)
          expect(server.connections()).toBe(0)
        } finally {
          await server.close()
        }
      })
    }

    for (const spelling of spellings) {
      it(`threat 39: ${spelling.name} (${spelling.command}) touches nothing outside the workspace`, async () => {
        const ws = workspace()
        const out = outside()
        const command = spelling.command.replaceAll("{outside}", out.dir).replaceAll("{remote}", out.remote)
        const outsideBefore = snapshot(out.dir)
        const run = await withSandbox(ws.root, bash.run({ command, timeoutSeconds: 20 }))
        expect(run.status).toBe("exited")
        expect(snapshot(out.dir)).toEqual(outsideBefore)
        expect(read("/etc/hosts")).toBe(hostsBefore)
        const shown = run.stdout + run.stderr
        expect(shown).not.toContain(out.secret)
        for (const secret of ws.secrets) expect(shown).not.toContain(secret)
        if (hostOnlyLine !== undefined) expect(shown).not.toContain(hostOnlyLine)
      })
    }

    it("threat 39: cat .env inside the sandbox reads an empty file; the key and server state read empty too", async () => {
      const ws = workspace()
      const run = await withSandbox(
        ws.root,
        bash.run({ command: "cat .env; echo -n '|'; cat config/server.key; echo -n '|'; ls -A .ugent; wc -c < .env" })
      )
      expect(run.stdout).toBe("||0\n")
      expect(run.exitCode).toBe(0)
      // The host's files are intact.
      expect(fs.readFileSync(path.join(ws.root, ".env"), "utf8")).toContain(ws.secrets[0]!)
    })

    it("a name the policy adds (a recipe's blocked) is masked like the built-in ones; a source file about secrets is not", async () => {
      const ws = workspace()
      fs.mkdirSync(path.join(ws.root, "data"))
      fs.writeFileSync(path.join(ws.root, "data", "app.sqlite"), "rows-of-users\n")
      fs.writeFileSync(path.join(ws.root, "secretStore.ts"), "export const store = 1\n")
      fs.writeFileSync(path.join(ws.root, ".env.example"), "API_KEY=\n")
      own(ws.root)
      const run = await withSandbox(
        ws.root,
        bash.run({
          command: "cat data/app.sqlite; echo -n '|'; cat .env; echo -n '|'; cat secretStore.ts .env.example"
        }),
        undefined,
        { blocked: ["*.sqlite"] }
      )
      expect(run.stdout).toBe("||export const store = 1\nAPI_KEY=\n")
      expect(fs.readFileSync(path.join(ws.root, "data", "app.sqlite"), "utf8")).toBe("rows-of-users\n")
    })

    it("threat 39: a secret added between calls is masked in the next call, however old its directory was", async () => {
      const ws = workspace()
      const sub = path.join(ws.root, "sub")
      fs.mkdirSync(sub)
      const old = new Date(Date.now() - 3_600_000)
      fs.utimesSync(sub, old, old)
      fs.utimesSync(ws.root, old, old)
      const late = token("late")
      const read = await withSandbox(
        ws.root,
        Effect.gen(function* () {
          // The first call remembers the settled directories; the second must see what changed in them.
          yield* bash.run({ command: "true" })
          fs.writeFileSync(path.join(sub, ".env.local"), `${late}\n`)
          fs.writeFileSync(path.join(ws.root, "prod.key"), `${late}\n`)
          fs.linkSync(path.join(ws.root, ".env"), path.join(ws.root, "notes.txt"))
          return yield* bash.run({ command: "cat sub/.env.local prod.key notes.txt" })
        })
      )
      expect(read.exitCode).toBe(0)
      expect(read.stdout).toBe("")
      expect(read.stdout + read.stderr).not.toContain(late)
      expect(read.stdout + read.stderr).not.toContain(ws.secrets[0]!)
    })

    it("threat 39 (control): the same payload escapes without the sandbox, so the checks above can fail", async () => {
      const ws = workspace()
      const out = outside()
      const server = await loopbackServer()
      try {
        fs.writeFileSync(path.join(ws.root, "p.sh"), payloadScript(out.dir, server.port))
        const run = await withSandbox(ws.root, bash.run({ command: payloads[0]!.command("bash p.sh") }), {
          bwrap: "/nonexistent/bwrap",
          unsandboxed: Sandbox.unsandboxedConsent
        })
        expect(run.sandbox).toBe("unsandboxed")
        expect(fs.existsSync(path.join(out.dir, "pwned"))).toBe(true)
        expect(read(path.join(ws.root, "leaked.txt"))).toContain(out.secret)
        expect(server.connections()).toBeGreaterThan(0)
      } finally {
        await server.close()
      }
    })
  })

  describe("22. leaked environment", () => {
    it("threat 22: the child's environment is the allow-list, and no secret of the server's reaches it", async () => {
      const ws = workspace()
      const run = await withSandbox(
        ws.root,
        bash.run({ command: "env; cat /proc/self/environ /proc/1/environ 2>/dev/null | tr '\\0' '\\n'" })
      )
      for (const value of Object.values(secretEnv)) expect(run.stdout).not.toContain(value)
      const names = new Set(
        run.stdout
          .split("\n")
          .filter((l) => l.includes("="))
          .map((l) => l.slice(0, l.indexOf("=")))
      )
      for (const name of names) {
        expect(
          ["PATH", "HOME", "TMPDIR", "LANG", "TERM", "USER", "LOGNAME", "SHELL", "PAGER", "GIT_PAGER"].concat([
            "NO_COLOR",
            "PWD",
            "SHLVL",
            "_",
            "OLDPWD"
          ])
        ).toContain(name)
      }
      expect(run.stdout).toContain("PATH=/usr/local/bin:/usr/bin:/bin\n")
    })

    it("threat 22: the server's processes and their environments are not visible (a PID namespace)", async () => {
      const ws = workspace()
      const run = await withSandbox(
        ws.root,
        bash.run({ command: "ls /proc | grep -c '^[0-9]'; cat /proc/*/cmdline | tr '\\0' ' '" })
      )
      expect(Number(run.stdout.split("\n")[0])).toBeLessThan(10)
      expect(run.stdout).not.toContain("vitest")
    })
  })

  describe("23. timeouts that leave grandchildren running", () => {
    it("threat 23: the timeout kills grandchildren, those that left the process group and the session too", async () => {
      const ws = workspace()
      const marker = `9${Math.floor(Math.random() * 1e6)}`
      const started = Date.now()
      const run = await withSandbox(
        ws.root,
        bash.run({
          command: [
            "(sleep 2; touch late-child) &",
            "(setsid bash -c 'sleep 2; touch late-setsid' &)",
            "nohup bash -c 'sleep 2; touch late-nohup' >/dev/null 2>&1 & disown",
            `sleep ${marker}`
          ].join("\n"),
          timeoutSeconds: 1
        })
      )
      expect(run.status).toBe("timed-out")
      expect(run.timedOut).toBe(true)
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(processesWith(`sleep ${marker}`)).toEqual([])
      await new Promise((r) => setTimeout(r, 3000))
      for (const late of ["late-child", "late-setsid", "late-nohup"]) {
        expect(fs.existsSync(path.join(ws.root, late)), `${late} was written after the timeout`).toBe(false)
      }
    })

    it("threat 23: system.kill kills a background run's whole tree", async () => {
      const ws = workspace()
      const marker = `8${Math.floor(Math.random() * 1e6)}`
      await withSandbox(
        ws.root,
        Effect.gen(function* () {
          const started = yield* bash.run({
            command: `(sleep 2; touch late-bg) & setsid bash -c 'sleep 2; touch late-bg-setsid' & sleep ${marker}`,
            background: true
          })
          expect(started.status).toBe("running")
          yield* Effect.sleep("300 millis")
          expect(processesWith(`sleep ${marker}`).length).toBeGreaterThan(0)
          const killed = yield* kill.run({ id: started.id })
          expect(killed.status).toBe("killed")
          expect(processesWith(`sleep ${marker}`)).toEqual([])
          const again = yield* output.run({ id: started.id })
          expect(again.status).toBe("killed")
        })
      )
      await new Promise((r) => setTimeout(r, 2500))
      expect(fs.existsSync(path.join(ws.root, "late-bg"))).toBe(false)
      expect(fs.existsSync(path.join(ws.root, "late-bg-setsid"))).toBe(false)
    })

    it("threat 23: closing the server kills the runs it still has", async () => {
      const ws = workspace()
      const marker = `7${Math.floor(Math.random() * 1e6)}`
      await withSandbox(
        ws.root,
        Effect.gen(function* () {
          yield* bash.run({ command: `sleep ${marker}`, background: true })
          yield* Effect.sleep("300 millis")
          expect(processesWith(`sleep ${marker}`).length).toBeGreaterThan(0)
        })
      )
      expect(processesWith(`sleep ${marker}`)).toEqual([])
    })
  })

  describe("contained: a fork bomb and an endless output", () => {
    it("a fork bomb ends at the time limit, held under the process limit, and leaves no process behind", async () => {
      const ws = workspace()
      const marker = `6${Math.floor(Math.random() * 1e6)}`
      const started = Date.now()
      const run = await withSandbox(
        ws.root,
        bash.run({ command: `: ${marker}; b(){ b|b & }; b; sleep 5`, timeoutSeconds: 3 }),
        { limits: { processes: 200 } }
      )
      expect(["timed-out", "exited"]).toContain(run.status)
      expect(Date.now() - started).toBeLessThan(20_000)
      await new Promise((r) => setTimeout(r, 500))
      expect(processesWith(marker)).toEqual([])
    })

    it("the process limit holds: 400 processes asked, at most the limit running", async () => {
      const ws = workspace()
      // perl (essential on Debian) counts the forks that succeed; bash would retry a failed fork for seconds.
      const forks =
        "perl -e '$n = 0; while ($n < 400) { my $p = fork(); last unless defined $p; if ($p == 0) { sleep 20; exit 0 } $n++ } print \"$n\\n\"'"
      // Twice in one sandbox: where runs join a pids group, the second run's process was started ahead.
      const limited = await withSandbox(
        ws.root,
        Effect.all([
          bash.run({ command: forks, timeoutSeconds: 20 }),
          bash.run({ command: forks, timeoutSeconds: 20 })
        ]),
        { limits: { processes: 100 } }
      )
      for (const run of limited) {
        const count = Number(run.stdout.trim())
        expect(count).toBeGreaterThan(10)
        expect(count).toBeLessThanOrEqual(100)
      }
      // The same program under the default limit gets all 400: the limit above is what held it.
      const unlimited = await withSandbox(ws.root, bash.run({ command: forks, timeoutSeconds: 20 }))
      expect(Number(unlimited.stdout.trim())).toBe(400)
    })

    it("an endless output is stopped at the byte ceiling; the result is head and tail within the limit", async () => {
      const ws = workspace()
      const rssBefore = process.memoryUsage().rss
      const started = Date.now()
      const run = await withSandbox(ws.root, bash.run({ command: "yes ugent", timeoutSeconds: 120 }), {
        limits: { outputBytes: 8 * 1024 * 1024 }
      })
      expect(run.status).toBe("output-limit")
      expect(run.truncated).toBe(true)
      expect(run.stdout.length + run.stderr.length).toBeLessThanOrEqual(30_000)
      expect(run.stdout.startsWith("ugent\nugent\n")).toBe(true)
      // The tail is the last output before the run was stopped, possibly in the middle of a line.
      expect(run.stdout.slice(-100)).toMatch(/ugent\nugent\nu?g?e?n?t?$/)
      expect(run.stdout).toMatch(/characters cut from the middle of stdout/)
      expect(Date.now() - started).toBeLessThan(60_000)
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024)
    })

    it("a file bigger than the file-size limit cannot be written", async () => {
      const ws = workspace()
      const run = await withSandbox(ws.root, bash.run({ command: "head -c 3000000 /dev/zero > big; echo $?" }), {
        limits: { fileBytes: 1024 * 1024 }
      })
      expect(fs.statSync(path.join(ws.root, "big")).size).toBeLessThanOrEqual(1024 * 1024)
      expect(run.stdout.trim()).not.toBe("0")
    })

    it("no network: a connection to the host's loopback fails inside, and succeeds when the operator shares the network", async () => {
      const ws = workspace()
      const server = await loopbackServer()
      try {
        const command = `(echo hi > /dev/tcp/127.0.0.1/${server.port}) 2>/dev/null && echo connected || echo refused`
        const closed = await withSandbox(ws.root, bash.run({ command }))
        expect(closed.stdout.trim()).toBe("refused")
        expect(server.connections()).toBe(0)
        const shared = await withSandbox(ws.root, bash.run({ command }), { network: true })
        expect(shared.stdout.trim()).toBe("connected")
        expect(server.connections()).toBe(1)
      } finally {
        await server.close()
      }
    })
  })

  describe("42. a sandbox that maps its user to host root", () => {
    const isRoot = process.geteuid?.() === 0
    const isolationOf = (root: string, options?: Sandbox.Options) =>
      Effect.runPromise(
        Effect.scoped(
          Effect.map(Sandbox.Sandbox, (s) => s.isolation).pipe(
            Effect.provide(Sandbox.layer(options)),
            Effect.provide(Workspace.layer({ root })),
            Effect.provide(NodeServices.layer)
          )
        )
      )

    it("threat 42: a command never runs as host root: what it makes belongs to an unprivileged host user", async () => {
      const ws = workspace()
      const run = await withSandbox(ws.root, bash.run({ command: "touch made-inside && id -u" }))
      expect(run.exitCode).toBe(0)
      const owner = fs.statSync(path.join(ws.root, "made-inside")).uid
      expect(owner).not.toBe(0)
      expect(owner).toBe(testOwner?.uid ?? process.getuid?.())
    })

    it("threat 42: the kernel's knobs under /proc are read-only (core_pattern, panic, drop_caches, sysrq-trigger)", async () => {
      const ws = workspace()
      // Only access() is asked of the host-wide knobs; hostname is written because it belongs to the sandbox's own UTS namespace.
      const run = await withSandbox(
        ws.root,
        bash.run({
          command: [
            'for f in /proc/sys/kernel/core_pattern /proc/sys/kernel/panic /proc/sys/vm/drop_caches /proc/sysrq-trigger /proc/sys/kernel/hostname; do test -w $f && echo "writable $f"; done',
            "(echo canary > /proc/sys/kernel/hostname) 2>/dev/null && echo wrote-hostname",
            "echo checked"
          ].join("; ")
        })
      )
      expect(run.stdout).toContain("checked")
      expect(run.stdout).not.toMatch(/writable|wrote-hostname/)
    })

    it("threat 42: the process limit is RLIMIT_NPROC of a user who is not root, which the kernel enforces with or without a pids group", async () => {
      const ws = workspace()
      const run = await withSandbox(ws.root, bash.run({ command: "ulimit -u" }), { limits: { processes: 77 } })
      expect(run.stdout.trim()).toBe("77")
      const isolation = await withSandbox(
        ws.root,
        Effect.map(Sandbox.Sandbox, (s) => s.isolation)
      )
      // The kernel exempts only a real user of root from RLIMIT_NPROC; commands never run as root.
      expect(isolation.hostUid).not.toBe(0)
    })

    it("threat 42: /dev is read-only and /dev/shm is capped like /tmp", async () => {
      const ws = workspace()
      const cap = 1024 * 1024
      const run = await withSandbox(
        ws.root,
        bash.run({
          command:
            "(touch /dev/planted) 2>/dev/null && echo dev-writable; head -c 3000000 /dev/zero > /dev/shm/big 2>/dev/null; stat -c %s /dev/shm/big"
        }),
        { limits: { tmpBytes: cap } }
      )
      expect(run.stdout).not.toContain("dev-writable")
      expect(Number(run.stdout.trim().split("\n").at(-1))).toBeLessThanOrEqual(cap)
    })

    it.runIf(isRoot)(
      "threat 42: as root, a root-owned workspace gets no shell, and the reason says how to fix it",
      async () => {
        const root = scratch("ugent-system-rootws-")
        const isolation = await isolationOf(root)
        expect(isolation.kind).toBe("none")
        expect(isolation.reason).toMatch(/host root/)
        expect(isolation.reason).toMatch(/--sandbox-user/)
        // Nor may the operator's opt-out run commands as root.
        const unsandboxed = await isolationOf(root, {
          bwrap: "/nonexistent/bwrap",
          unsandboxed: Sandbox.unsandboxedConsent
        })
        expect(unsandboxed.kind).toBe("none")
        const members = await Effect.runPromise(
          Effect.scoped(System.family().build.pipe(Effect.provide(Workspace.layer({ root }))))
        )
        expect(Object.keys(members)).toEqual([])
      }
    )

    it.runIf(isRoot)(
      "threat 42: as root, a named user runs the commands; one that cannot write the workspace is refused",
      async () => {
        const root = scratch("ugent-system-rootws-")
        const refused = await isolationOf(root, { user: { uid: 65534, gid: 65534 } })
        expect(refused.kind).toBe("none")
        expect(refused.reason).toMatch(/cannot write the workspace/)
        const asRoot = await isolationOf(root, { user: { uid: 0, gid: 0 } })
        expect(asRoot.reason).toMatch(/not root/)
        fs.chownSync(root, 65534, 65534)
        const named = await isolationOf(root, { user: { uid: 65534, gid: 65534 } })
        expect(named.kind).toBe("bubblewrap")
        expect(named.hostUid).toBe(65534)
      }
    )
  })

  describe("21. a sandbox that is not a boundary says so", () => {
    const host = (root: string) => Workspace.layer({ root })
    const build = (root: string, options?: System.Options) =>
      Effect.runPromise(Effect.scoped(System.family(options).build.pipe(Effect.provide(host(root)))))

    it("threat 21: with bubblewrap, the isolation is named and the tool says what it contains", async () => {
      const ws = workspace()
      const isolation = await withSandbox(
        ws.root,
        Effect.map(Sandbox.Sandbox, (s) => s.isolation)
      )
      expect(isolation.kind).toBe("bubblewrap")
      expect(isolation.reason).toMatch(/namespaces/)
      expect(["rlimit", "cgroup"]).toContain(isolation.processLimit)
      const tools = await build(ws.root)
      expect(Object.keys(tools)).toEqual(["system.bash", "system.output", "system.kill"])
      expect(tools["system.bash"]!.tool.description).toMatch(/sandbox.*there is no network/)
    })

    it("threat 21: without a sandbox the shell is not offered at all", async () => {
      const ws = workspace()
      const tools = await build(ws.root, { bwrap: "/nonexistent/bwrap" })
      expect(tools).toEqual({})
    })

    it("threat 21: the operator's opt-out offers it, loudly marked, at L3 only", async () => {
      const ws = workspace()
      const tools = await build(ws.root, { bwrap: "/nonexistent/bwrap", unsandboxed: Sandbox.unsandboxedConsent })
      expect(tools["system.bash"]!.tool.description).toMatch(/UNSANDBOXED/)
      expect(tools["system.bash"]!.tool.trust).toBe(3)
      const isolation = await withSandbox(
        ws.root,
        Effect.map(Sandbox.Sandbox, (s) => s.isolation),
        {
          bwrap: "/nonexistent/bwrap",
          unsandboxed: Sandbox.unsandboxedConsent
        }
      )
      expect(
        SystemBash.requiredLevel({ command: "git status" }, { level: 1, commands: ["git status"] }, isolation)
      ).toBe(3)
    })
  })

  describe("the text policy in front of the sandbox: only the named refusals stay", () => {
    const policy = Sandboxed.textPolicy({ allow: "all" })
    // Each of these the text policy refused, for want of reading it; the sandbox now contains what it runs.
    const unread: ReadonlyArray<readonly [string, (outside: string) => string]> = [
      ["a program by path (./p.sh)", () => "./p.sh"],
      ["a program known only at run time (CMD=bash; $CMD p.sh)", () => "CMD=bash; $CMD p.sh"],
      ['a script known only at run time (bash -c "$S")', () => "S='bash p.sh'; bash -c \"$S\""],
      ["a case statement", () => "case x in x) bash p.sh;; esac"],
      ["a cd outside the workspace", (outside) => `(cd ${outside} && touch pwned-by-cd); bash p.sh`]
    ]
    for (const [name, command] of unread) {
      it(`threat 39: ${name} runs in the sandbox under the standard text policy, and its payload touches nothing outside`, async () => {
        const ws = workspace()
        const out = outside()
        const server = await loopbackServer()
        try {
          fs.writeFileSync(path.join(ws.root, "p.sh"), `#!/bin/sh\n${payloadScript(out.dir, server.port)}`)
          fs.chmodSync(path.join(ws.root, "p.sh"), 0o755)
          const outsideBefore = snapshot(out.dir)
          const gitBefore = snapshot(path.join(ws.root, ".git"))
          const run = await withSandbox(ws.root, bash.run({ command: command(out.dir), timeoutSeconds: 20 }), {
            textPolicy: policy
          })
          expect(run.status).toBe("exited")
          expect(read(path.join(ws.root, "ran.txt"))).toContain("ran")
          expect(snapshot(out.dir)).toEqual(outsideBefore)
          expect(snapshot(path.join(ws.root, ".git"))).toEqual(gitBefore)
          expect(read("/etc/hosts")).toBe(hostsBefore)
          const leaked = read(path.join(ws.root, "leaked.txt")) + run.stdout + run.stderr
          expect(leaked).not.toContain(out.secret)
          for (const secret of ws.secrets) expect(leaked).not.toContain(secret)
          expect(server.connections()).toBe(0)
        } finally {
          await server.close()
        }
      })
    }

    it("the named refusals stay in front of the sandbox, each saying why", () => {
      const where = { root: "/srv/app", cwd: "/srv/app", sandboxed: true }
      const refused: ReadonlyArray<readonly [string, string]> = [
        ["sudo ls", "privilege"],
        ["rm -rf /", "rm-root"],
        ["chmod 777 x", "chmod-777"],
        ["echo x > /etc/x", "write-etc"],
        ["git config user.name x", "git"],
        ["git push --force origin main", "git"],
        ["git commit --no-verify -m x", "git"],
        ["git rebase -i HEAD~2", "git"],
        ["CMD=ls; $CMD && sudo ls", "privilege"]
      ]
      for (const [command, rule] of refused) expect(policy(command, where), command).toMatchObject({ ok: false, rule })
      for (const command of ["./build.sh", "CMD=ls; $CMD", "make test", "ls | wc -l", "(cd sub && ls)", "cd /tmp"]) {
        expect(policy(command, where), command).toEqual({ ok: true })
      }
    })

    it("with no sandbox behind it (the unsandboxed opt-out), the text policy still refuses what it cannot read", async () => {
      const ws = workspace()
      fs.writeFileSync(path.join(ws.root, "build.sh"), "#!/bin/sh\necho ran > ran.txt\n")
      fs.chmodSync(path.join(ws.root, "build.sh"), 0o755)
      const error = await withSandbox(ws.root, Effect.flip(bash.run({ command: "./build.sh" })), {
        bwrap: "/nonexistent/bwrap",
        unsandboxed: Sandbox.unsandboxedConsent,
        textPolicy: policy
      })
      expect(error._tag).toBe("CommandDenied")
      expect(error.message).toContain("by path")
      expect(fs.existsSync(path.join(ws.root, "ran.txt"))).toBe(false)
    })
  })

  describe("20. wrappers that hide the real command", () => {
    const policy = Sandboxed.textPolicy({ allow: "all" })

    for (const command of [
      "timeout 5 env X=1 sudo ls",
      "nice -n 1 nohup sudo ls",
      "xargs sudo ls",
      "bash -c 'sudo ls'"
    ]) {
      it(`threat 20: the advisory text policy sees through ${JSON.stringify(command)} before anything runs`, async () => {
        const ws = workspace()
        const error = await withSandbox(ws.root, Effect.flip(bash.run({ command: `touch ran; ${command}` })), {
          textPolicy: policy
        })
        expect(error._tag).toBe("CommandDenied")
        expect(error.message).toMatch(/advisory first refusal/)
        expect(fs.existsSync(path.join(ws.root, "ran"))).toBe(false)
      })
    }

    it("threat 20: a lowered level never covers a wrapped command", () => {
      const allowance = { level: 1, commands: ["git status", "ls *"] } as const
      for (const command of [
        "timeout 5 git status",
        "env git status",
        "command ls",
        "nohup ls",
        "xargs ls",
        "PATH=. ls"
      ]) {
        expect(SystemBash.requiredLevel({ command }, allowance)).toBe(3)
      }
    })

    it("threat 20: inside the sandbox, sudo cannot raise privileges", async () => {
      const ws = workspace()
      const run = await withSandbox(
        ws.root,
        bash.run({ command: "id -u; sudo -n id -u 2>&1 || true; cat /proc/self/status | grep CapEff" })
      )
      expect(run.stdout.split("\n")[0]).toBe("1000")
      expect(run.stdout).toContain("CapEff:\t0000000000000000")
      expect(run.stdout.split("\n")).not.toContain("0")
    })
  })

  describe("19. permission rules skipped after N subcommands", () => {
    it("threat 19: the text policy refuses a denied subcommand after 500 allowed ones, and nothing runs", async () => {
      const ws = workspace()
      const command = [...Array.from({ length: 500 }, (_, i) => `echo ${i} >> count`), "sudo ls"].join(" && ")
      const error = await withSandbox(ws.root, Effect.flip(bash.run({ command })), {
        textPolicy: Sandboxed.textPolicy({ allow: "all" })
      })
      expect(error._tag).toBe("CommandDenied")
      expect(fs.existsSync(path.join(ws.root, "count"))).toBe(false)
    })

    it.prop(
      "threat 19: an allow-list covers a plain line only when it covers every command, at any position, with no cap",
      {
        before: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 300 })),
        after: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 50 })),
        op: Schema.Literals([";", "&&", "||", "|"])
      },
      ({ before, after, op }) => {
        const parts = [
          ...Array.from({ length: before }, () => "git status"),
          "rm -rf x",
          ...Array.from({ length: after }, () => "git status")
        ]
        const allowance = { level: 1, commands: ["git status"] } as const
        expect(SystemBash.requiredLevel({ command: parts.join(` ${op} `) }, allowance)).toBe(3)
        expect(
          SystemBash.requiredLevel(
            { command: parts.filter((p) => p !== "rm -rf x").join(` ${op} `) || "git status" },
            allowance
          )
        ).toBe(1)
      },
      { arbitrary: { runs: 50 } }
    )
  })
})
