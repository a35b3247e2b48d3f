/**
 * The typed errors of `search.grep`. They live apart from `search/Grep.ts`
 * so the backends can raise them without an import cycle; `Grep.ts`
 * re-exports every one.
 *
 * @internal
 */
import type { ToolError } from "@ugent/core"
import { Schema } from "effect"

const shown = (s: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping control characters is the point
  s.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)

/**
 * The pattern cannot be searched for: it holds a NUL byte, it is not a valid
 * regular expression (with the engine's own message), it could only match
 * a line break, or it compiles to more than the engine allows.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidPattern extends Schema.TaggedError<InvalidPattern>()("InvalidPattern", {
  pattern: Schema.String,
  reason: Schema.Literals(["nul-byte", "syntax", "newline", "too-large"]),
  engine: Schema.Literals(["re2js", "ripgrep"]),
  detail: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const p = JSON.stringify(shown(this.pattern))
    if (this.reason === "nul-byte") {
      return `The pattern ${p} contains a NUL byte, which no line of text can hold. Remove it and call again.`
    }
    if (this.reason === "too-large") {
      return `The pattern ${p} is too large for ${this.engine} (${this.detail.trim()}). Use smaller repetition counts or a shorter pattern.`
    }
    if (this.reason === "newline") {
      return `The pattern ${p} can only match a line break, but search.grep matches within one line at a time. Search for the text of a single line instead.`
    }
    return `Invalid pattern ${p} (${this.engine}: ${this.detail.replace(/\s*\n\s*/g, " ").trim()}). Patterns are regular expressions in RE2/ripgrep syntax: put a backslash before ( ) [ ] { } . * + ? | ^ $ \\ to match them literally.`
  }
}

/**
 * The `glob` filter is not a valid glob.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidGlob extends Schema.TaggedError<InvalidGlob>()("InvalidGlob", {
  glob: Schema.String,
  detail: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `Invalid glob ${JSON.stringify(shown(this.glob))}: ${this.detail}. Use a glob such as "*.ts", "src/**/*.ts", "*.{ts,tsx}" or "!*.test.ts" (a leading ! excludes).`
  }
}

/**
 * The `type` filter names no known file type.
 *
 * @category errors
 * @since 0.1.0
 */
export class UnknownFileType extends Schema.TaggedError<UnknownFileType>()("UnknownFileType", {
  type: Schema.String,
  known: Schema.Array(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `Unknown file type ${JSON.stringify(shown(this.type))}. Known types: ${this.known.join(", ")}. Or filter by file name with glob (e.g. "*.ext").`
  }
}

/**
 * The configuration asks for the ripgrep engine, and `rg` is not on `PATH`.
 *
 * @category errors
 * @since 0.1.0
 */
export class EngineUnavailable extends Schema.TaggedError<EngineUnavailable>()("EngineUnavailable", {
  engine: Schema.Literal("ripgrep")
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `search.grep is configured to use ripgrep, but no rg executable is on PATH. Install ripgrep, or configure the engine as "auto" or "typescript" (both engines return the same results).`
  }
}

/**
 * The search engine failed for a reason other than the input (ripgrep
 * crashed or printed something unexpected).
 *
 * @category errors
 * @since 0.1.0
 */
export class SearchFailed extends Schema.TaggedError<SearchFailed>()("SearchFailed", {
  engine: Schema.Literals(["re2js", "ripgrep"]),
  detail: Schema.String,
  retryable: Schema.Boolean
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    return `The search could not complete (${this.engine}: ${this.detail}). Try again; if it keeps failing, search a smaller path.`
  }
}

/** What a backend may fail with. */
export type GrepError = InvalidPattern | InvalidGlob | SearchFailed
