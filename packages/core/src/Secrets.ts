/**
 * The names of secret files, in one list: environment files, anything named
 * like a secret, a password or a private key, private keys and certificates,
 * and the files where tools keep credentials. The forbidden rule of `Trust`
 * (which no trust level unlocks) and the blocked names of the tools'
 * workspace are both derived from it, so a name refused by one is refused by
 * the other.
 *
 * A pattern without `/` is a glob tested against every segment of a path; a
 * pattern `**\/a/b` names a path that ends with the segments `a/b`. Only `*`
 * is special (any characters, dots included); case is ignored. The same
 * strings are picomatch globs (with `dot` and `nocase`) with the same
 * meaning, which is how the workspace uses them.
 *
 * @since 0.2.0
 */

/**
 * One pattern and why it is there.
 *
 * @category models
 * @since 0.2.0
 */
export interface Rule {
  readonly pattern: string
  readonly what: string
}

/**
 * The secret names. Some ordinary files fall under them on purpose, as the
 * design asks: `.env.example` (an environment file, which often holds real
 * values) and a source file such as `src/secrets.ts` or `password.ts` (named
 * like a secret) are refused too.
 *
 * @category constants
 * @since 0.2.0
 */
export const rules: ReadonlyArray<Rule> = [
  { pattern: ".env*", what: "an environment file" },
  { pattern: "*secret*", what: "named like a secret" },
  { pattern: "*password*", what: "named like a password" },
  { pattern: "*private*key*", what: "named like a private key" },
  { pattern: "id_rsa*", what: "an SSH key" },
  { pattern: "id_dsa*", what: "an SSH key" },
  { pattern: "id_ecdsa*", what: "an SSH key" },
  { pattern: "id_ed25519*", what: "an SSH key" },
  { pattern: "*.pem", what: "a key or certificate" },
  { pattern: "*.key", what: "a key" },
  { pattern: "*.p8", what: "a private key" },
  { pattern: "*.p12", what: "a key store" },
  { pattern: "*.pfx", what: "a key store" },
  { pattern: "*.keystore", what: "a key store" },
  { pattern: "*.jks", what: "a key store" },
  { pattern: "*.ppk", what: "an SSH key" },
  { pattern: "*.kdbx", what: "a password database" },
  { pattern: ".netrc", what: "a credential store" },
  { pattern: "_netrc", what: "a credential store" },
  { pattern: ".npmrc", what: "a credential store (registry tokens)" },
  { pattern: ".pypirc", what: "a credential store" },
  { pattern: ".pgpass", what: "a credential store" },
  { pattern: ".htpasswd", what: "a credential store" },
  { pattern: ".git-credentials", what: "a credential store" },
  { pattern: "credentials", what: "a credential store" },
  { pattern: "credentials.*", what: "a credential store" },
  { pattern: ".vault-token", what: "a credential store" },
  { pattern: ".s3cfg", what: "a credential store" },
  { pattern: ".gnupg", what: "a key ring" },
  { pattern: ".ssh", what: "SSH keys" },
  { pattern: "**/.git/config", what: "a repository's configuration" },
  { pattern: "**/.docker/config.json", what: "a credential store" },
  { pattern: "**/.kube/config", what: "a credential store" }
]

/**
 * The patterns of {@link rules}, as globs.
 *
 * @category constants
 * @since 0.2.0
 */
export const patterns: ReadonlyArray<string> = rules.map((r) => r.pattern)

/**
 * Which rule a path matched, and the segment (or tail of segments) it
 * matched on.
 *
 * @category models
 * @since 0.2.0
 */
export interface Match {
  readonly rule: Rule
  readonly name: string
}

const escapeRegex = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")

interface Compiled {
  readonly rule: Rule
  /** A segment glob: one regex; a path rule: its segments, lower-cased. */
  readonly segment: RegExp | undefined
  readonly tail: ReadonlyArray<string> | undefined
}

const compiled: ReadonlyArray<Compiled> = rules.map((rule) =>
  rule.pattern.startsWith("**/")
    ? { rule, segment: undefined, tail: rule.pattern.slice(3).toLowerCase().split("/") }
    : { rule, segment: new RegExp(`^${rule.pattern.split("*").map(escapeRegex).join(".*")}$`, "is"), tail: undefined }
)

const segmentsOf = (path: string): ReadonlyArray<string> =>
  path
    .replace(/\\/g, "/")
    .split("/")
    .filter((s) => s !== "" && s !== ".")

/**
 * The rule a path matches: the first segment (from the outermost) that a
 * segment glob names, with the first such glob; else a path rule whose
 * segments end the path. Backslashes count as separators.
 *
 * **Example** (Names the design calls secret)
 * ```ts
 * import { Secrets } from "@ugent/core"
 * for (const p of ["password.txt", "keys/Private_Key.txt", "config/.env.local", "home/.kube/config", "src/index.ts"]) {
 *   console.log(p, Secrets.match(p)?.name)
 * }
 * // => password.txt password.txt
 * // => keys/Private_Key.txt Private_Key.txt
 * // => config/.env.local .env.local
 * // => home/.kube/config .kube/config
 * // => src/index.ts undefined
 * ```
 *
 * @category predicates
 * @since 0.2.0
 */
export const match = (path: string): Match | undefined => {
  const segments = segmentsOf(path)
  // Segment by segment from the outermost, the first rule that names one; then the path rules (as the workspace does).
  for (const name of segments) {
    const hit = compiled.find((c) => c.segment?.test(name) === true)
    if (hit !== undefined) return { rule: hit.rule, name }
  }
  for (const c of compiled) {
    if (c.tail === undefined || segments.length < c.tail.length) continue
    const tail = segments.slice(segments.length - c.tail.length)
    if (tail.every((s, i) => s.toLowerCase() === c.tail![i])) return { rule: c.rule, name: tail.join("/") }
  }
  return undefined
}

/**
 * Whether a path names a secret file.
 *
 * @category predicates
 * @since 0.2.0
 */
export const isSecret = (path: string): boolean => match(path) !== undefined
