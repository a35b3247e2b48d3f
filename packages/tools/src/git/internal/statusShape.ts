/**
 * The last step of `git.status`, shared by both backends: lists sorted by
 * path (byte order, as git sorts), the clean flag, totals, and at most
 * `limit` files listed over all lists (staged, unstaged, conflicted, then
 * untracked).
 *
 * @internal
 */
import type * as Results from "./results.ts"

export interface StatusLists {
  readonly branch: string | null
  readonly head: string | null
  readonly staged: ReadonlyArray<Results.Change>
  readonly unstaged: ReadonlyArray<Results.Change>
  readonly untracked: ReadonlyArray<string>
  readonly conflicted: ReadonlyArray<string>
}

const encoder = new TextEncoder()

/** Compares paths by their UTF-8 bytes, git's order. */
export const byBytes = (a: string, b: string): number => {
  if (a === b) return 0
  const x = encoder.encode(a)
  const y = encoder.encode(b)
  const n = Math.min(x.length, y.length)
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

export const shapeStatus = (lists: StatusLists, limit: number): Results.StatusOutput => {
  const staged = [...lists.staged].sort((a, b) => byBytes(a.path, b.path))
  const unstaged = [...lists.unstaged].sort((a, b) => byBytes(a.path, b.path))
  const conflicted = [...lists.conflicted].sort(byBytes)
  const untracked = [...lists.untracked].sort(byBytes)
  let room = limit
  const take = <A>(xs: ReadonlyArray<A>): Array<A> => {
    const kept = xs.slice(0, Math.max(room, 0))
    room -= kept.length
    return kept
  }
  const total = staged.length + unstaged.length + conflicted.length + untracked.length
  return {
    branch: lists.branch,
    detached: lists.branch === null && lists.head !== null,
    head: lists.head,
    noCommits: lists.head === null,
    clean: total === 0,
    staged: take(staged),
    unstaged: take(unstaged),
    conflicted: take(conflicted),
    untracked: take(untracked),
    totals: {
      staged: staged.length,
      unstaged: unstaged.length,
      untracked: untracked.length,
      conflicted: conflicted.length
    },
    truncated: total > limit
  }
}
