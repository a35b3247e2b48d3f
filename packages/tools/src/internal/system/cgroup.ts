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
  /** A group for one run with its limit; returns the file a process writes its pid to, to join it. */
  readonly forRun: (id: string, max: number) => string | undefined
  /** Gives a run's group back (after its processes are gone). */
  readonly release: (id: string) => void
  /** Removes every group; `false` while a finished task is still charged to one (try again shortly). */
  readonly close: () => boolean
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

/** Removes a group; `false` while a task is still charged to it. */
const rmdirQuietly = (dir: string): boolean => {
  try {
    fs.rmdirSync(dir)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT"
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
    // Groups are kept for the next runs: making and removing one costs more than a run. A group is reused
    // once no task is charged to it (a finished task may stay charged for a moment after it was reaped).
    const groups: Array<string> = []
    const busy = new Set<string>()
    const byRun = new Map<string, string>()
    const idle = (group: string) => {
      try {
        return fs.readFileSync(path.join(group, "pids.current"), "utf8").trim() === "0"
      } catch {
        return false
      }
    }
    return {
      dir,
      forRun: (id, max) => {
        let group = groups.find((g) => !busy.has(g) && idle(g))
        try {
          if (group === undefined) {
            group = path.join(dir, `g${groups.length + 1}`)
            fs.mkdirSync(group)
            groups.push(group)
          }
          fs.writeFileSync(path.join(group, "pids.max"), String(max))
          busy.add(group)
          byRun.set(id, group)
          return path.join(group, "cgroup.procs")
        } catch {
          return undefined
        }
      },
      release: (id) => {
        const group = byRun.get(id)
        byRun.delete(id)
        if (group !== undefined) busy.delete(group)
      },
      close: () => {
        for (const group of groups.splice(0)) if (!rmdirQuietly(group)) groups.push(group)
        return groups.length === 0 && rmdirQuietly(dir)
      }
    }
  }
  return undefined
}
