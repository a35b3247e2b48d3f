/**
 * The names of files that hold secrets, in one list: environment files
 * (their templates excepted), private keys and key stores, and the files
 * where tools keep credentials. The forbidden rule of `Trust` (which no trust
 * level unlocks) and the blocked names of the tools' workspace are both
 * derived from it, so a name refused by one is refused by the other. It is
 * the hard core: configuration adds names (a recipe's `blocked`), never
 * removes these.
 *
 * A name is listed for what the file holds, not for a word in it: a source
 * file or a document about secrets (`src/secretStore.ts`,
 * `docs/secrets-guide.md`) is read like any other.
 *
 * A pattern without `/` is a glob tested against every segment of a path; a
 * pattern `**\/a/b` names a path that ends with the segments `a/b`. Only `*`
 * is special (any characters, dots included); case is ignored. {@link globs}
 * are the same rules as picomatch globs (with `dot` and `nocase`), which is
 * how the workspace uses them.
 *
 * @since 0.2.0
 */

/**
 * One pattern, why it is there, and the names it covers that hold no secret.
 *
 * @category models
 * @since 0.2.0
 */
export interface Rule {
  readonly pattern: string
  readonly what: string
  /** Names the pattern matches that are not secret (the templates of environment files), compared without case. */
  readonly except?: ReadonlyArray<string> | undefined
}

/**
 * The secret names.
 *
 * @category constants
 * @since 0.2.0
 */
export const rules: ReadonlyArray<Rule> = [
  { pattern: ".env*", what: "an environment file", except: [".env.example", ".env.sample", ".env.template"] },
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
  { pattern: "credentials.json", what: "a credential store" },
  { pattern: "credentials.yml", what: "a credential store" },
  { pattern: "credentials.yaml", what: "a credential store" },
  { pattern: "credentials.toml", what: "a credential store" },
  { pattern: "credentials.db", what: "a credential store" },
  { pattern: "credentials.yml.enc", what: "a credential store" },
  { pattern: "secrets.json", what: "a secrets file" },
  { pattern: "secrets.yml", what: "a secrets file" },
  { pattern: "secrets.yaml", what: "a secrets file" },
  { pattern: "secrets.toml", what: "a secrets file" },
  { pattern: "client_secret*.json", what: "an OAuth client secret" },
  { pattern: ".vault-token", what: "a credential store" },
  { pattern: ".s3cfg", what: "a credential store" },
  { pattern: ".gnupg", what: "a key ring" },
  { pattern: ".ssh", what: "SSH keys" },
  { pattern: "**/.git/config", what: "a repository's configuration" },
  { pattern: "**/.docker/config.json", what: "a credential store" },
  { pattern: "**/.kube/config", what: "a credential store" }
]

/**
 * The patterns of {@link rules}, as written there.
 *
 * @category constants
 * @since 0.2.0
 */
export const patterns: ReadonlyArray<string> = rules.map((r) => r.pattern)

/**
 * A rule as one picomatch glob: its exceptions as a negated extglob
 * (`.env!(.example|.sample|.template)`).
 */
const globOf = (rule: Rule): string => {
  if (rule.except === undefined || rule.except.length === 0) return rule.pattern
  const prefix = rule.pattern.slice(0, -1)
  return `${prefix}!(${rule.except.map((e) => e.slice(prefix.length)).join("|")})`
}

/**
 * The rules as picomatch globs (with `dot` and `nocase`), in the order of
 * {@link rules}: what the workspace blocks.
 *
 * **Example** (The environment files' templates are not blocked)
 * ```ts
 * import { Secrets } from "@ugent/core"
 * console.log(Secrets.globs[0])
 * // => .env!(.example|.sample|.template)
 * ```
 *
 * @category constants
 * @since 0.2.0
 */
export const globs: ReadonlyArray<string> = rules.map(globOf)

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
  /** The names the rule does not cover, lower-cased. */
  readonly except: ReadonlySet<string>
}

const compiled: ReadonlyArray<Compiled> = rules.map((rule) => {
  const except = new Set((rule.except ?? []).map((e) => e.toLowerCase()))
  return rule.pattern.startsWith("**/")
    ? { rule, segment: undefined, tail: rule.pattern.slice(3).toLowerCase().split("/"), except }
    : {
        rule,
        segment: new RegExp(`^${rule.pattern.split("*").map(escapeRegex).join(".*")}$`, "is"),
        tail: undefined,
        except
      }
})

const segmentsOf = (path: string): ReadonlyArray<string> =>
  path
    .replace(/\\/g, "/")
    .split("/")
    .filter((s) => s !== "" && s !== ".")

/**
 * The rule a path matches: the first segment (from the outermost) that a
 * segment glob names (and does not except), with the first such glob; else
 * a path rule whose segments end the path. Backslashes count as separators.
 *
 * **Example** (Names the design calls secret)
 * ```ts
 * import { Secrets } from "@ugent/core"
 * for (const p of ["config/.env.local", ".env.example", "keys/server.KEY", "home/.kube/config", "src/secretStore.ts"]) {
 *   console.log(p, Secrets.match(p)?.name)
 * }
 * // => config/.env.local .env.local
 * // => .env.example undefined
 * // => keys/server.KEY server.KEY
 * // => home/.kube/config .kube/config
 * // => src/secretStore.ts undefined
 * ```
 *
 * @category predicates
 * @since 0.2.0
 */
export const match = (path: string): Match | undefined => {
  const segments = segmentsOf(path)
  // Segment by segment from the outermost, the first rule that names one; then the path rules (as the workspace does).
  for (const name of segments) {
    const hit = compiled.find((c) => c.segment?.test(name) === true && !c.except.has(name.toLowerCase()))
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
