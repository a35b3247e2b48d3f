/**
 * The output of a run, kept in bounded memory however much is written: the
 * first `limit` characters of a stream, and the last `limit` characters of
 * what follows them. Any head and tail of at most `limit` characters each can
 * be rendered from that, with a note of what was cut from the middle.
 *
 * @internal
 */

/** One stream's output so far. */
export class Capture {
  readonly limit: number
  /** Characters seen in all. */
  total = 0
  private head = ""
  private tail: Array<string> = []
  private tailLength = 0
  private readonly decoder = new TextDecoder("utf-8")

  constructor(limit: number) {
    this.limit = limit
  }

  /** Takes a chunk of bytes (UTF-8, possibly split inside a character). */
  pushBytes(bytes: Uint8Array): void {
    this.push(this.decoder.decode(bytes, { stream: true }))
  }

  /** Flushes a character left incomplete by the last chunk. */
  end(): void {
    this.push(this.decoder.decode())
  }

  push(text: string): void {
    if (text.length === 0) return
    this.total += text.length
    let rest = text
    if (this.head.length < this.limit) {
      const take = this.limit - this.head.length
      this.head += rest.slice(0, take)
      rest = rest.slice(take)
    }
    if (rest.length === 0) return
    this.tail.push(rest)
    this.tailLength += rest.length
    // Compact now and then: the tail never holds more than twice the limit.
    if (this.tailLength > 2 * this.limit) {
      const joined = this.tail.join("").slice(-this.limit)
      this.tail = [joined]
      this.tailLength = joined.length
    }
  }

  /** The first `n` characters. */
  first(n: number): string {
    return this.head.slice(0, n)
  }

  /** The last `n` characters (`n` at most the limit). */
  last(n: number): string {
    if (n <= 0) return ""
    const tail = this.tail.join("")
    if (tail.length >= n) return tail.slice(-n)
    return (this.head + tail).slice(-n)
  }

  /** Everything, when nothing was dropped. */
  get whole(): string | undefined {
    return this.total === this.head.length + this.tailLength ? this.head + this.tail.join("") : undefined
  }
}

/** The note put where characters were cut; its length is counted in the budget. */
export const cutNote = (stream: string, cut: number): string =>
  `\n[… ${cut} characters cut from the middle of ${stream}: narrow the command (| head, | tail, grep) to see them …]\n`

const safeEnd = (s: string): string => {
  // Never end on the first half of a surrogate pair.
  const last = s.charCodeAt(s.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? s.slice(0, -1) : s
}

const safeStart = (s: string): string => {
  const first = s.charCodeAt(0)
  return first >= 0xdc00 && first <= 0xdfff ? s.slice(1) : s
}

/** A stream rendered within `budget` characters, head and tail kept around a note; and whether it was cut. */
export const render = (capture: Capture, stream: string, budget: number): { text: string; cut: boolean } => {
  const whole = capture.whole
  if (whole !== undefined && whole.length <= budget) return { text: whole, cut: false }
  const room = Math.max(0, budget - cutNote(stream, capture.total).length)
  const headLength = Math.ceil(room / 2)
  const head = safeEnd(capture.first(headLength))
  const tail = safeStart(capture.last(room - headLength))
  return { text: head + cutNote(stream, capture.total - head.length - tail.length) + tail, cut: true }
}

/**
 * Both streams within one budget: each gets what it needs when the sum fits;
 * otherwise stderr keeps at least a third (errors are what a caller reads
 * first) and stdout the rest.
 */
export const renderBoth = (
  stdout: Capture,
  stderr: Capture,
  budget: number
): { stdout: string; stderr: string; truncated: boolean } => {
  let errBudget = Math.min(stderr.total, Math.max(budget - stdout.total, Math.floor(budget / 3)))
  const outBudget = Math.min(stdout.total, budget - errBudget)
  errBudget = budget - outBudget
  const out = render(stdout, "stdout", outBudget)
  const err = render(stderr, "stderr", errBudget)
  return { stdout: out.text, stderr: err.text, truncated: out.cut || err.cut }
}
