/**
 * Small facts of git's output that both backends must reproduce: strict ISO
 * 8601 dates in the recorded offset (`%aI`), the subject of `%s` (the first
 * paragraph on one line) and of blame's `summary` (the first line), the
 * message as stored, short hashes, and `.mailmap` identities.
 *
 * @internal
 */

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** `%aI`: the date in its recorded offset, e.g. `2024-05-01T12:00:00+02:00`. */
export const isoDate = (seconds: number, offsetMinutes: number): string => {
  const d = new Date((seconds + offsetMinutes * 60) * 1000)
  const sign = offsetMinutes < 0 ? "-" : "+"
  const abs = Math.abs(offsetMinutes)
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes()
  )}:${pad(d.getUTCSeconds())}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
}

/** Parses git's `+HHMM` / `-HHMM` offset into minutes east of UTC. */
export const offsetOf = (tz: string): number => {
  const m = /^([+-])(\d\d)(\d\d)$/.exec(tz.trim())
  if (m === null) return 0
  const minutes = Number(m[2]) * 60 + Number(m[3])
  return m[1] === "-" ? -minutes : minutes
}

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r"
const trimEndSpace = (s: string) => {
  let end = s.length
  while (end > 0 && isSpace(s[end - 1]!)) end--
  return s.slice(0, end)
}

const linesAfterBlank = (message: string): Array<string> => {
  const lines = message.split("\n")
  let i = 0
  while (i < lines.length && trimEndSpace(lines[i]!) === "") i++
  return lines.slice(i)
}

/** `%s`: the first paragraph, its lines right-trimmed and joined by spaces. */
export const subjectOf = (message: string): string => {
  const out: Array<string> = []
  for (const line of linesAfterBlank(message)) {
    const t = trimEndSpace(line)
    if (t === "") break
    out.push(t)
  }
  return out.join(" ")
}

/** blame's `summary`: the first line after leading blank lines, as stored. */
export const summaryOf = (message: string, hash: string): string => {
  const lines = message.split("\n")
  let i = 0
  while (i < lines.length && lines[i] === "") i++
  const line = lines[i] ?? ""
  return line === "" ? `(${hash})` : line
}

/** The message as returned: as stored, without its trailing line feeds. */
export const messageOf = (raw: string): string => raw.replace(/\n+$/, "")

export const shortHash = (hash: string): string => hash.slice(0, 7)

export const ZERO_HASH = "0000000000000000000000000000000000000000"

// ---------------------------------------------------------------------------
// .mailmap
// ---------------------------------------------------------------------------

interface MailmapTarget {
  name: string | undefined
  email: string | undefined
}

interface MailmapEntry extends MailmapTarget {
  readonly byName: Map<string, MailmapTarget>
}

/** A parsed `.mailmap`: maps a recorded identity to the canonical one. */
export class Mailmap {
  private readonly entries = new Map<string, MailmapEntry>()

  static readonly empty: Mailmap = new Mailmap()

  static parse(text: string): Mailmap {
    const map = new Mailmap()
    for (const raw of text.split("\n")) {
      if (raw.startsWith("#")) continue
      const first = parseNameEmail(raw, false)
      if (first === undefined) continue
      // Like git: text after the first address is a second identity; without "<" it is taken as a name.
      const second =
        first.rest === "" ? undefined : (parseNameEmail(first.rest, true) ?? { name: first.rest, email: undefined })
      map.add(first.name, first.email, second?.name, second?.email)
    }
    return map
  }

  private add(
    newName: string | undefined,
    newEmail: string,
    oldName: string | undefined,
    oldEmail: string | undefined
  ) {
    let properEmail: string | undefined = newEmail
    let commitEmail = oldEmail
    if (commitEmail === undefined) {
      commitEmail = newEmail
      properEmail = undefined
    }
    const key = commitEmail.toLowerCase()
    let entry = this.entries.get(key)
    if (entry === undefined) {
      entry = { name: undefined, email: undefined, byName: new Map() }
      this.entries.set(key, entry)
    }
    if (oldName === undefined) {
      if (newName !== undefined) entry.name = newName
      if (properEmail !== undefined) entry.email = properEmail
    } else {
      const k = oldName.toLowerCase()
      const target = entry.byName.get(k) ?? { name: undefined, email: undefined }
      if (newName !== undefined) target.name = newName
      if (properEmail !== undefined) target.email = properEmail
      entry.byName.set(k, target)
    }
  }

  /** The canonical name and email of a recorded identity. */
  map(name: string, email: string): { readonly name: string; readonly email: string } {
    const entry = this.entries.get(email.toLowerCase())
    if (entry === undefined) return { name, email }
    const target = entry.byName.get(name.toLowerCase()) ?? entry
    if (target.name === undefined && target.email === undefined) return { name, email }
    return { name: target.name ?? name, email: target.email ?? email }
  }
}

const parseNameEmail = (
  s: string,
  allowEmptyEmail: boolean
): { readonly name: string | undefined; readonly email: string; readonly rest: string } | undefined => {
  const lt = s.indexOf("<")
  if (lt === -1) return undefined
  const gt = s.indexOf(">", lt + 1)
  if (gt === -1) return undefined
  if (!allowEmptyEmail && gt === lt + 1) return undefined
  let start = 0
  while (start < lt && isSpace(s[start]!)) start++
  let end = lt
  while (end > start && isSpace(s[end - 1]!)) end--
  const name = s.slice(start, end)
  return { name: name === "" ? undefined : name, email: s.slice(lt + 1, gt), rest: s.slice(gt + 1) }
}
