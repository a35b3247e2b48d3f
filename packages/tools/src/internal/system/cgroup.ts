/**
 * A process-count limit through a `pids` control group, for hosts where the
 * resource limit does not hold: `RLIMIT_NPROC` is never enforced for a
 * process whose real user is root on the host (the kernel exempts it, user
 * namespace or not), so a server running as root needs the cgroup to stop a
 * fork bomb. Best effort: it works where this process may create a child
 * group with a `pids.max` (cgroup v1's pids hierarchy, or v2 with the pids
 * controller delegated), and reports that it cannot otherwise.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** A parent group made for this server, under which each run gets its own group. */
export interface PidsCgroup {
  readonly dir: string
  /** Makes the group of one run with its limit; returns the file a process writes its pid to, to join it. */
  readonly forRun: (id: string, max: number) => string | undefined
  /** Removes a run's group (after its processes are gone). */
  readonly release: (id: string) => void
  /** Removes the parent group. */
  readonly close: () => void
}

const candidates = (): Array<string> => {
  let lines: Array<string>
  try {
    lines = fs.readFileSync("/proc/self/cgroup", "utf8").split("\n")
  } catch {
    return []
  }
  const out: Array<string> = []
  for (const line of lines) {
    const [, controllers, where] = line.split(":", 3) as [string, string | undefined, string | undefined]
    if (where === undefined || controllers === undefined) continue
    if (controllers.split(",").includes("pids")) out.push(path.join("/sys/fs/cgroup/pids", where))
    else if (controllers === "") out.push(path.join("/sys/fs/cgroup", where))
  }
  return out
}

const rmdirQuietly = (dir: string) => {
  try {
    fs.rmdirSync(dir)
  } catch {
    // Still busy (processes being reaped) or already gone; the parent's removal retries.
  }
}

/** Finds a pids hierarchy where a child group with a limit can be made; `undefined` when there is none. */
export const open = (tag: string): PidsCgroup | undefined => {
  for (const base of candidates()) {
    const dir = path.join(base, tag)
    try {
      fs.mkdirSync(dir)
    } catch {
      continue
    }
    try {
      // A cgroup v2 parent must delegate the controller to its children.
      if (!fs.existsSync(path.join(dir, "pids.max"))) {
        try {
          fs.writeFileSync(path.join(dir, "cgroup.subtree_control"), "+pids")
        } catch {
          // Not delegated: the probe below fails and this hierarchy is left.
        }
      }
      const probe = path.join(dir, "probe")
      fs.mkdirSync(probe)
      const usable = fs.existsSync(path.join(probe, "pids.max"))
      if (usable) fs.writeFileSync(path.join(probe, "pids.max"), "8")
      fs.rmdirSync(probe)
      if (!usable) throw new Error("no pids.max")
    } catch {
      rmdirQuietly(dir)
      continue
    }
    return {
      dir,
      forRun: (id, max) => {
        const run = path.join(dir, id)
        try {
          fs.mkdirSync(run)
          fs.writeFileSync(path.join(run, "pids.max"), String(max))
          return path.join(run, "cgroup.procs")
        } catch {
          rmdirQuietly(run)
          return undefined
        }
      },
      release: (id) => rmdirQuietly(path.join(dir, id)),
      close: () => {
        try {
          for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
            if (entry.isDirectory()) rmdirQuietly(path.join(dir, entry.name))
          }
        } catch {
          // Gone already.
        }
        rmdirQuietly(dir)
      }
    }
  }
  return undefined
}
