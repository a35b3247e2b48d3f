/**
 * The command policy of `Sandboxed`: every simple command of a command line
 * (see `shellParse.ts`) is unwrapped through the programs that only run
 * another one (`timeout`, `nice`, `nohup`, `env`, `command`, `exec`,
 * `xargs`, `find -exec`, `sh -c`, `bash -c`, `eval`, `watch`, …), then its
 * real program is checked against the allow-list and the denied patterns. A
 * command line passes only if every command in it passes; there is no count
 * past which checking stops.
 *
 * @internal
 */
import * as NodePath from "node:path"
import { maxDepth, parse, type Redirect, type Word } from "./shellParse.ts"

/** A program about to run, after unwrapping. */
export interface Invocation {
  /** The program's name (`rm`, `git`), without a system directory. */
  readonly name: string
  readonly args: ReadonlyArray<Word>
  /** Its arguments are completed at run time by `xargs` or `find -exec`: targets cannot be seen. */
  readonly fed: boolean
  /** The simple command it came from, as written. */
  readonly source: string
}

/** An extra rule: returns why an invocation is refused, or `undefined`. */
export interface DenyRule {
  readonly name: string
  readonly check: (invocation: Invocation) => string | undefined
}

export interface CommandPolicy {
  /** Program names that may run; `"all"` turns the allow-list off (denied patterns still apply). */
  readonly allow: ReadonlySet<string> | "all"
  /** The workspace root and the working directory, both real absolute paths. */
  readonly root: string
  readonly cwd: string
  readonly rules: ReadonlyArray<DenyRule>
  /**
   * Text the policy cannot read (a program known only at run time or called
   * by path, a script it cannot parse or that nests too deep, a `cd` it cannot
   * place): `"refuse"` (default: nothing else stands behind the policy) or
   * `"run"` (an operating-system sandbox does, and contains it).
   */
  readonly unreadable?: "refuse" | "run" | undefined
}

export type Verdict =
  | { readonly ok: true; readonly programs: ReadonlyArray<string> }
  | { readonly ok: false; readonly rule: string; readonly detail: string; readonly subcommand: string }

interface Denial {
  readonly rule: string
  readonly detail: string
  readonly subcommand: string
}

const deny = (rule: string, detail: string, subcommand: string): Denial => ({ rule, detail, subcommand })

// A refusal only for want of reading the text: in front of a sandbox, the sandbox decides instead.
const unread = (policy: CommandPolicy, denial: Denial): Denial | undefined =>
  policy.unreadable === "run" ? undefined : denial

/** Words that open or close a compound command; the command proper follows them. */
const reservedPrefixes = new Set([
  "if",
  "then",
  "else",
  "elif",
  "do",
  "while",
  "until",
  "!",
  "{",
  "}",
  "fi",
  "done",
  "time"
])
const privileged = new Set(["sudo", "doas", "su", "pkexec", "run0", "sudoedit"])
const shells = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "fish"])
const systemDir = /^\/(usr\/)?(local\/)?s?bin\/[^/]+$/
const assignment = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/

const isOption = (w: Word) => w.text.startsWith("-") && w.text !== "-" && !w.dynamic

/** Skips options; `withValue` names those that take the next word as their value (unless written `--opt=value`). */
const skipOptions = (args: ReadonlyArray<Word>, withValue: ReadonlySet<string>, from = 0): number => {
  let i = from
  while (i < args.length) {
    const t = args[i]!.text
    if (t === "--") return i + 1
    if (!isOption(args[i]!)) return i
    i += withValue.has(t) ? 2 : 1
  }
  return i
}

/** Lexically normalizes a path against `cwd` (`~` is outside any workspace). */
const resolve = (cwd: string, p: string): string | undefined => {
  if (p === "~" || p.startsWith("~/") || p.startsWith("~")) return undefined
  return NodePath.resolve(cwd, p)
}

const isInside = (root: string, p: string): boolean => {
  const rel = NodePath.relative(root, p)
  return rel === "" || (!rel.startsWith("..") && !NodePath.isAbsolute(rel))
}

const underEtc = (p: string): boolean => {
  if (!p.startsWith("/")) return false
  const n = NodePath.posix.normalize(p)
  return n === "/etc" || n.startsWith("/etc/")
}

const writeRedirects = new Set([">", ">>", ">|", "&>", "&>>", "<>"])

const checkRedirects = (redirects: ReadonlyArray<Redirect>, source: string): Denial | undefined => {
  for (const r of redirects) {
    const writes = writeRedirects.has(r.op) || (r.op === ">&" && !/^[0-9-]+$/.test(r.target.text))
    if (writes && underEtc(r.target.text)) {
      return deny(
        "write-etc",
        `it writes to ${r.target.text} with "${r.op}"; nothing under /etc may be changed`,
        source
      )
    }
  }
  return undefined
}

// --- denied patterns -------------------------------------------------------------------------

const positional = (args: ReadonlyArray<Word>): ReadonlyArray<Word> => {
  const out: Array<Word> = []
  let options = true
  for (const a of args) {
    if (options && a.text === "--") options = false
    else if (options && isOption(a)) continue
    else out.push(a)
  }
  return out
}

const shortCluster = (w: Word): string | undefined =>
  /^-[A-Za-z0-9]+$/.test(w.text) && !w.text.startsWith("--") ? w.text.slice(1) : undefined

const rootish = new Set(["/", "/*", "~", "~/", "~/*", "/.", "/..", "..", "../", "../*"])

const checkRm = (inv: Invocation): string | undefined => {
  const recursive = inv.args.some(
    (a) =>
      a.text === "--recursive" || (shortCluster(a)?.includes("r") ?? false) || (shortCluster(a)?.includes("R") ?? false)
  )
  if (inv.args.some((a) => a.text === "--no-preserve-root")) return "it removes with --no-preserve-root"
  if (!recursive) return undefined
  for (const t of positional(inv.args)) {
    const n = t.text.replace(/\/{2,}/g, "/")
    if (rootish.has(n) || rootish.has(n.replace(/\/+$/, "") || "/"))
      return `it removes ${t.text} recursively (rm -rf /)`
    if (t.dynamic) return `it removes ${t.text} recursively, a path known only at run time (if it is empty, that is /)`
  }
  if (inv.fed) return "it removes recursively paths that xargs or find supply at run time"
  return undefined
}

const checkChmod = (inv: Invocation): string | undefined => {
  const mode = positional(inv.args)[0]
  if (mode === undefined) return undefined
  const m = mode.text
  if (/^[0-7]{3,4}$/.test(m)) {
    const others = Number(m[m.length - 1])
    if ((others & 2) !== 0) return `it makes files world-writable (chmod ${m}; chmod 777 is refused)`
    return undefined
  }
  for (const clause of m.split(",")) {
    const c = /^([ugoa]*)([-+=])([rwxXstugo]*)$/.exec(clause)
    if (c === null) continue
    const who = c[1]!
    if (c[2] !== "-" && c[3]!.includes("w") && (who === "" || who.includes("o") || who.includes("a"))) {
      return `it makes files world-writable (chmod ${m})`
    }
  }
  return undefined
}

const destinationWriters = new Set(["cp", "mv", "install", "ln", "rsync", "scp"])
const argumentWriters = new Set([
  "tee",
  "truncate",
  "touch",
  "rm",
  "rmdir",
  "chmod",
  "chown",
  "chgrp",
  "mkdir",
  "unlink",
  "shred"
])

const checkEtcArgs = (inv: Invocation): string | undefined => {
  const targets: Array<Word> = []
  if (destinationWriters.has(inv.name)) {
    const pos = positional(inv.args)
    const last = pos[pos.length - 1]
    if (last !== undefined) targets.push(last)
    inv.args.forEach((a, i) => {
      if (a.text === "-t" || a.text === "--target-directory") {
        const next = inv.args[i + 1]
        if (next !== undefined) targets.push(next)
      } else if (a.text.startsWith("--target-directory=")) {
        targets.push({ ...a, text: a.text.slice("--target-directory=".length) })
      }
    })
  } else if (argumentWriters.has(inv.name)) {
    targets.push(...positional(inv.args))
  } else if (
    inv.name === "sed" &&
    inv.args.some((a) => a.text === "-i" || a.text.startsWith("-i") || a.text === "--in-place")
  ) {
    targets.push(...positional(inv.args))
  } else if (inv.name === "dd") {
    for (const a of inv.args) if (a.text.startsWith("of=")) targets.push({ ...a, text: a.text.slice(3) })
  }
  const hit = targets.find((t) => underEtc(t.text))
  return hit === undefined ? undefined : `it writes to ${hit.text}; nothing under /etc may be changed`
}

const gitGlobalWithValue = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--super-prefix",
  "--config-env"
])
const protectedBranches = new Set(["main", "master"])

const branchOf = (ref: string): string => ref.replace(/^refs\/heads\//, "")

const checkGit = (inv: Invocation): string | undefined => {
  const args = inv.args
  let i = 0
  while (i < args.length && isOption(args[i]!)) {
    const t = args[i]!.text
    if (t === "-c" || t.startsWith("--config-env")) {
      return `it changes git's configuration for the command (git ${t}), which can run arbitrary programs`
    }
    i += gitGlobalWithValue.has(t) ? 2 : 1
  }
  const sub = args[i]
  if (sub === undefined) return undefined
  if (sub.dynamic) return "its git subcommand is known only at run time"
  const rest = args.slice(i + 1)
  const has = (...flags: ReadonlyArray<string>) => rest.some((a) => flags.includes(a.text))
  const clusterHas = (letter: string) => rest.some((a) => shortCluster(a)?.includes(letter) ?? false)

  if (has("--no-verify")) return "it skips git hooks with --no-verify"
  switch (sub.text) {
    case "config": {
      const readOnly =
        has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool") ||
        rest[0]?.text === "get" ||
        rest[0]?.text === "list"
      return readOnly ? undefined : "it changes git's configuration (git config); only reading it is allowed"
    }
    case "commit": {
      for (const a of rest) {
        const cluster = shortCluster(a)
        if (cluster === undefined) continue
        for (const letter of cluster) {
          if (letter === "n") return "it skips git hooks (git commit -n is --no-verify)"
          // These letters take the rest of the cluster as their value.
          if ("mFCctS".includes(letter)) break
        }
      }
      if (has("--interactive", "--patch", "-p") || clusterHas("p"))
        return "it is interactive (git commit --patch waits for a terminal)"
      return undefined
    }
    case "rebase":
      return has("-i", "--interactive") ? "it is interactive (git rebase -i waits for an editor)" : undefined
    case "add":
      return has("-i", "--interactive", "-p", "--patch", "-e", "--edit")
        ? `it is interactive (git add ${rest.find((a) => ["-i", "--interactive", "-p", "--patch", "-e", "--edit"].includes(a.text))?.text} waits for a terminal)`
        : undefined
    case "clean":
      return has("-i", "--interactive") || clusterHas("i")
        ? "it is interactive (git clean -i waits for a terminal)"
        : undefined
    case "checkout":
    case "reset":
    case "stash":
    case "restore":
      return has("-p", "--patch") ? `it is interactive (git ${sub.text} --patch waits for a terminal)` : undefined
    case "push": {
      const force =
        has("--force", "-f", "--force-if-includes") ||
        rest.some((a) => a.text.startsWith("--force-with-lease")) ||
        clusterHas("f")
      const everything = has("--all", "--mirror", "--branches")
      const positionalArgs: Array<Word> = []
      for (let j = 0; j < rest.length; j++) {
        const a = rest[j]!
        if (["-o", "--push-option", "--repo", "--receive-pack", "--exec"].includes(a.text)) {
          j++
          continue
        }
        if (!isOption(a)) positionalArgs.push(a)
      }
      const refspecs = positionalArgs.slice(1)
      for (const spec of refspecs) {
        if (spec.dynamic) return force ? "it force-pushes a ref known only at run time" : undefined
        const plus = spec.text.startsWith("+")
        const body = plus ? spec.text.slice(1) : spec.text
        const [src, dst] = body.includes(":") ? (body.split(":", 2) as [string, string]) : [body, body]
        const target = branchOf(dst === "" ? src : dst)
        if (body.startsWith(":") && protectedBranches.has(branchOf(dst)))
          return `it deletes the ${branchOf(dst)} branch on the remote`
        if ((force || plus) && protectedBranches.has(target)) return `it force-pushes to ${target}`
        if ((force || plus) && (target === "HEAD" || src === "HEAD")) return "it force-pushes HEAD, which may be main"
      }
      if (force && (refspecs.length === 0 || everything)) {
        return "it force-pushes without naming a branch, which may be main; name the branch (not main or master)"
      }
      return undefined
    }
    default:
      return undefined
  }
}

const checkCd = (inv: Invocation, policy: CommandPolicy): string | undefined => {
  const target = positional(inv.args)[0]
  if (target === undefined) return "it changes to the home directory, outside the workspace"
  if (target.dynamic) return `it changes to ${target.text}, a directory known only at run time`
  if (target.text === "-") return "it changes to the previous directory, which may be outside the workspace"
  const resolved = resolve(policy.cwd, target.text)
  if (resolved === undefined || !isInside(policy.root, resolved))
    return `it changes to ${target.text}, outside the workspace`
  return undefined
}

const builtinPatterns = (inv: Invocation, policy: CommandPolicy): Denial | undefined => {
  const checks: ReadonlyArray<readonly [string, () => string | undefined]> = [
    ["privilege", () => (privileged.has(inv.name) ? `it runs ${inv.name}, which raises privileges` : undefined)],
    ["rm-root", () => (inv.name === "rm" ? checkRm(inv) : undefined)],
    ["chmod-777", () => (inv.name === "chmod" ? checkChmod(inv) : undefined)],
    ["write-etc", () => checkEtcArgs(inv)],
    ["git", () => (inv.name === "git" ? checkGit(inv) : undefined)],
    [
      "interactive",
      () => (inv.args.some((a) => a.text === "--interactive") ? "it is interactive (--interactive)" : undefined)
    ],
    [
      "cd-outside",
      () =>
        (inv.name === "cd" || inv.name === "pushd") && policy.unreadable !== "run" ? checkCd(inv, policy) : undefined
    ]
  ]
  for (const [rule, check] of checks) {
    const detail = check()
    if (detail !== undefined) return deny(rule, detail, inv.source)
  }
  for (const rule of policy.rules) {
    const detail = rule.check(inv)
    if (detail !== undefined) return deny(rule.name, detail, inv.source)
  }
  return undefined
}

// --- unwrapping --------------------------------------------------------------------------------

type Next =
  | { readonly _tag: "words"; readonly words: ReadonlyArray<Word>; readonly fed: boolean }
  | { readonly _tag: "script"; readonly script: Word }
  | { readonly _tag: "none" }
  | { readonly _tag: "deny"; readonly rule: string; readonly detail: string }

const words = (ws: ReadonlyArray<Word>, fed = false): Next => ({ _tag: "words", words: ws, fed })
const literal = (text: string): Word => ({ text, dynamic: false, glob: false, quoted: true })
const joined = (ws: ReadonlyArray<Word>): Word => ({
  text: ws.map((w) => w.text).join(" "),
  dynamic: ws.some((w) => w.dynamic),
  glob: false,
  quoted: true
})

/** What a wrapper program runs: the words of the inner command, a script string, or nothing. */
const unwrap = (name: string, args: ReadonlyArray<Word>): Next | undefined => {
  switch (name) {
    case "timeout": {
      const i = skipOptions(args, new Set(["-k", "--kill-after", "-s", "--signal"]))
      return words(args.slice(i + 1)) // past the duration
    }
    case "nice": {
      const i = skipOptions(args, new Set(["-n", "--adjustment"]))
      return words(args.slice(i))
    }
    case "nohup":
    case "builtin":
    case "chronic":
    case "unbuffer":
      return words(args[0]?.text === "--" ? args.slice(1) : args)
    case "setsid":
    case "command":
    case "time":
      return words(args.slice(skipOptions(args, new Set())))
    case "exec":
      return words(args.slice(skipOptions(args, new Set(["-a"]))))
    case "stdbuf":
      return words(args.slice(skipOptions(args, new Set(["-i", "-o", "-e", "--input", "--output", "--error"]))))
    case "ionice": {
      if (args.some((a) => a.text === "-p" || a.text === "-P" || a.text === "-u")) return { _tag: "none" }
      return words(args.slice(skipOptions(args, new Set(["-c", "-n", "--class", "--classdata"]))))
    }
    case "env": {
      for (let i = 0; i < args.length; i++) {
        const t = args[i]!.text
        if (t === "-S" || t === "--split-string" || t.startsWith("--split-string=") || /^-S./.test(t)) {
          const value =
            t === "-S" || t === "--split-string"
              ? args[i + 1]
              : { ...args[i]!, text: t.replace(/^(-S|--split-string=)/, "") }
          if (value === undefined) return { _tag: "deny", rule: "unvettable", detail: "env -S has no string" }
          return {
            _tag: "script",
            script: joined([value, ...args.slice(t === "-S" || t === "--split-string" ? i + 2 : i + 1)])
          }
        }
      }
      let i = skipOptions(args, new Set(["-u", "--unset", "-C", "--chdir"]))
      while (i < args.length && assignment.test(args[i]!.text)) i++
      return i < args.length ? words(args.slice(i)) : { _tag: "none" }
    }
    case "xargs": {
      const i = skipOptions(
        args,
        new Set([
          "-a",
          "-d",
          "-E",
          "-I",
          "-L",
          "-n",
          "-P",
          "-s",
          "--arg-file",
          "--delimiter",
          "--eof",
          "--replace",
          "--max-lines",
          "--max-args",
          "--max-procs",
          "--max-chars",
          "--process-slot-var"
        ])
      )
      return words(i < args.length ? args.slice(i) : [literal("echo")], true)
    }
    case "watch": {
      const exec = args.some((a) => a.text === "-x" || a.text === "--exec")
      const i = skipOptions(args, new Set(["-n", "--interval", "-q", "--equexit"]))
      return exec ? words(args.slice(i)) : { _tag: "script", script: joined(args.slice(i)) }
    }
    case "flock": {
      const i = skipOptions(args, new Set(["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"]))
      const rest = args.slice(i + 1) // past the lock file
      const c = rest.findIndex((a) => a.text === "-c" || a.text === "--command")
      if (c !== -1) {
        const script = rest[c + 1]
        return script === undefined ? { _tag: "none" } : { _tag: "script", script }
      }
      return words(rest.slice(skipOptions(rest, new Set())))
    }
    case "script": {
      const c = args.findIndex((a) => a.text === "-c" || a.text === "--command")
      const script = c === -1 ? undefined : args[c + 1]
      return script === undefined
        ? { _tag: "deny", rule: "unvettable", detail: "script without -c starts an interactive shell" }
        : { _tag: "script", script }
    }
    case "eval":
      return args.length === 0 ? { _tag: "none" } : { _tag: "script", script: joined(args) }
    default:
      break
  }
  if (shells.has(name)) {
    let command = false
    let i = 0
    for (; i < args.length; i++) {
      const t = args[i]!.text
      if (t === "--") {
        i++
        break
      }
      if (t === "-o" || t === "+o" || t === "-O" || t === "+O") {
        i++
        continue
      }
      if (t.startsWith("--")) continue
      if (/^[-+][A-Za-z]+$/.test(t)) {
        if (t.startsWith("-") && t.includes("c")) command = true
        if (t.startsWith("-") && t.includes("s")) {
          return {
            _tag: "deny",
            rule: "unvettable",
            detail: `${name} -s reads its commands from its input, which cannot be vetted`
          }
        }
        continue
      }
      break
    }
    const script = args[i]
    if (command) {
      return script === undefined
        ? { _tag: "deny", rule: "unvettable", detail: `${name} -c has no command` }
        : { _tag: "script", script }
    }
    if (script === undefined) {
      return {
        _tag: "deny",
        rule: "unvettable",
        detail: `${name} without a script reads its commands from its input, which cannot be vetted`
      }
    }
    return undefined // `bash file.sh`: the shell itself is the program, checked against the allow-list
  }
  return undefined
}

const programName = (w: Word): string | Denial => {
  if (w.dynamic || w.glob) return deny("dynamic-command", `the program ${w.text} is known only at run time`, w.text)
  if (w.text === "") return deny("dynamic-command", "the program name is empty", w.text)
  if (!w.text.includes("/")) return w.text
  if (systemDir.test(w.text)) return NodePath.posix.basename(w.text)
  return deny("path-command", `it runs ${w.text} by path; call an allowed program by its name`, w.text)
}

const isDenial = (u: unknown): u is Denial => typeof u === "object" && u !== null && "rule" in u

const vetWords = (
  ws: ReadonlyArray<Word>,
  source: string,
  policy: CommandPolicy,
  depth: number,
  fed: boolean,
  programs: Array<string>
): Denial | undefined => {
  if (depth > maxDepth) return unread(policy, deny("too-deep", `wrappers nest more than ${maxDepth} deep`, source))
  let i = 0
  for (;;) {
    const w = ws[i]
    if (w === undefined) return undefined
    if (!w.quoted && reservedPrefixes.has(w.text)) {
      i++
      continue
    }
    if (!w.quoted && (w.text === "for" || w.text === "select")) return undefined // a loop header: the rest is its word list
    if (!w.quoted && w.text === "function") {
      i += 2 // `function name`: the body follows as commands of its own
      continue
    }
    if (!w.quoted && w.text === "[[") return undefined // a conditional: its words are operands; substitutions were parsed
    if (assignment.test(w.text)) {
      i++
      continue
    }
    break
  }
  const name = programName(ws[i]!)
  if (isDenial(name)) return unread(policy, { ...name, subcommand: source })
  const args = ws.slice(i + 1)
  const next = unwrap(name, args)
  if (next !== undefined) {
    programs.push(name)
    switch (next._tag) {
      case "none":
        return undefined
      case "deny":
        return deny(next.rule, next.detail, source)
      case "words":
        return next.words.length === 0
          ? undefined
          : vetWords(next.words, source, policy, depth + 1, fed || next.fed, programs)
      case "script": {
        if (next.script.dynamic)
          return unread(
            policy,
            deny("dynamic-command", `the script given to ${name} is known only at run time`, source)
          )
        return vetScript(next.script.text, policy, depth + 1, programs)
      }
    }
  }
  if (name === "find") {
    // `find … -exec prog args ;` runs prog on every file found.
    for (let j = 0; j < args.length; j++) {
      if (["-exec", "-execdir", "-ok", "-okdir"].includes(args[j]!.text)) {
        let end = j + 1
        while (end < args.length && args[end]!.text !== ";" && args[end]!.text !== "+") end++
        const denial = vetWords(args.slice(j + 1, end), source, policy, depth + 1, true, programs)
        if (denial !== undefined) return denial
        j = end
      }
    }
  }
  programs.push(name)
  const denial = builtinPatterns({ name, args, fed, source }, policy)
  if (denial !== undefined) return denial
  if (policy.allow !== "all" && !policy.allow.has(name)) {
    return deny("not-allowed", `${name} is not on the list of allowed programs`, source)
  }
  return undefined
}

const vetScript = (
  script: string,
  policy: CommandPolicy,
  depth: number,
  programs: Array<string>
): Denial | undefined => {
  const parsed = parse(script, depth)
  if (!parsed.ok) return unread(policy, deny("unparseable", parsed.error, script))
  for (const command of parsed.commands) {
    const redirect = checkRedirects(command.redirects, command.source)
    if (redirect !== undefined) return redirect
    const denial = vetWords(command.words, command.source, policy, depth, false, programs)
    if (denial !== undefined) return denial
  }
  return undefined
}

/** Vets a whole command line: every simple command, nested and unwrapped, must pass. */
export const vet = (command: string, policy: CommandPolicy): Verdict => {
  const programs: Array<string> = []
  const denial = vetScript(command, policy, 0, programs)
  return denial === undefined ? { ok: true, programs } : { ok: false, ...denial }
}
