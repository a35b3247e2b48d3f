/**
 * The file system a sandboxed command sees, and the bubblewrap arguments
 * that build it. The host's `/etc` is not mounted: a small synthetic one is
 * (the sandbox user in `passwd` and `group`, `hosts`, `resolv.conf` only when
 * the network is shared), plus the few host entries programs need to start
 * that hold no secret (`ld.so.cache`, `alternatives`, time zone, public CA
 * certificates). System directories are mounted read-only; `/tmp` is a
 * private, size-limited tmpfs; `/proc` belongs to the new PID namespace, its
 * kernel knobs read-only; `/dev` is bubblewrap's minimal one, read-only but
 * for a size-limited `/dev/shm`; the root itself is read-only. Only the
 * workspace, at its real path, is writable, with its masks on top.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Masks } from "./masks.ts"

/** The user and group a command runs as inside the sandbox. */
export const sandboxUid = 1000
export const sandboxUser = "sandbox"

/** Top-level system paths mounted read-only (a symbolic link on the host is recreated as one). */
const systemPaths = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]

/** The kernel's knobs under `/proc`, read-only in every sandbox. */
const procCovered = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"]

/** Host `/etc` entries that programs need and that hold no secret. */
const hostEtc = [
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "timezone",
  "protocols",
  "services",
  "mime.types",
  "ssl/certs",
  "ssl/openssl.cnf",
  "ca-certificates",
  "ca-certificates.conf",
  "pki/tls/certs",
  "pki/ca-trust/extracted"
]

/** What the host offers, read once. */
export interface Host {
  /** `--symlink` / `--ro-bind` pairs for the system paths that exist. */
  readonly system: ReadonlyArray<readonly [op: "--symlink" | "--ro-bind", from: string, to: string]>
  /** The host `/etc` entries that exist. */
  readonly etc: ReadonlyArray<string>
  /** A directory of synthetic files (`passwd`, `group`, …) and an empty directory `empty/`, removed on close. */
  readonly synthetic: string
  /** The synthetic `/etc` entries, by name. */
  readonly etcFiles: ReadonlyArray<string>
}

const exists = (p: string) => {
  try {
    fs.lstatSync(p)
    return true
  } catch {
    return false
  }
}

/** Reads the host layout and writes the synthetic files. */
export const host = (options: { readonly home: string; readonly network: boolean }): Host => {
  const system: Array<readonly ["--symlink" | "--ro-bind", string, string]> = []
  for (const p of systemPaths) {
    let st: fs.Stats
    try {
      st = fs.lstatSync(p)
    } catch {
      continue
    }
    if (st.isSymbolicLink()) system.push(["--symlink", fs.readlinkSync(p), p])
    else if (st.isDirectory()) system.push(["--ro-bind", p, p])
  }
  const etc = hostEtc.filter((e) => exists(path.join("/etc", e)))
  const synthetic = fs.mkdtempSync(path.join(os.tmpdir(), "ugent-sandbox-"))
  // Readable by the unprivileged user a root server's bubblewrap runs as; nothing in it is secret.
  fs.chmodSync(synthetic, 0o755)
  fs.mkdirSync(path.join(synthetic, "empty"))
  fs.writeFileSync(path.join(synthetic, "null"), "")
  const files: Record<string, string> = {
    passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\n${sandboxUser}:x:${sandboxUid}:${sandboxUid}:${sandboxUser}:${options.home}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\n${sandboxUser}:x:${sandboxUid}:\nnogroup:x:65534:\n`,
    hosts: "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
    hostname: "sandbox\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
  }
  if (options.network) {
    try {
      files["resolv.conf"] = fs.readFileSync("/etc/resolv.conf", "utf8")
    } catch {
      // No resolver configured on the host: names resolve from hosts only.
    }
  }
  fs.mkdirSync(path.join(synthetic, "etc"))
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(synthetic, "etc", name), content)
  return { system, etc, synthetic, etcFiles: Object.keys(files) }
}

/** What one run needs beyond the host. */
export interface Run {
  readonly root: string
  readonly cwd: string
  readonly masks: Masks
  readonly network: boolean
  /** Further host paths mounted read-only at the same path. */
  readonly readOnly: ReadonlyArray<string>
  readonly tmpBytes: number
  readonly disableUserns: boolean
}

/** The bubblewrap options for one run (everything before `--`). */
export const bwrapArgs = (h: Host, run: Run): Array<string> => {
  const args = [
    "--unshare-all",
    "--unshare-user",
    ...(run.network ? ["--share-net"] : []),
    "--die-with-parent",
    "--new-session",
    ...(run.disableUserns ? ["--disable-userns"] : []),
    "--cap-drop",
    "ALL",
    "--uid",
    String(sandboxUid),
    "--gid",
    String(sandboxUid),
    "--hostname",
    "sandbox"
  ]
  for (const [op, from, to] of h.system) args.push(op, from, to)
  args.push("--dir", "/etc")
  for (const name of h.etcFiles) args.push("--ro-bind", path.join(h.synthetic, "etc", name), `/etc/${name}`)
  for (const entry of h.etc) args.push("--ro-bind", `/etc/${entry}`, `/etc/${entry}`)
  // bubblewrap covers these only where it finds them writable, and /proc/sys is a 0555 directory of writable files.
  args.push("--proc", "/proc")
  for (const p of procCovered) args.push("--ro-bind-try", p, p)
  // /dev is a tmpfs the sandbox's user owns: read-only, with /dev/shm sized like /tmp.
  args.push("--dev", "/dev", "--size", String(run.tmpBytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev")
  args.push("--size", String(run.tmpBytes), "--tmpfs", "/tmp")
  for (const p of run.readOnly) args.push("--ro-bind-try", p, p)
  args.push("--bind", run.root, run.root)
  for (const p of run.masks.readOnly) args.push("--ro-bind", p, p)
  for (const p of run.masks.dirs) args.push("--ro-bind", path.join(h.synthetic, "empty"), p)
  for (const p of run.masks.files) args.push("--ro-bind", path.join(h.synthetic, "null"), p)
  args.push("--remount-ro", "/", "--chdir", run.cwd)
  return args
}
