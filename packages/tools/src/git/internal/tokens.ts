/**
 * A push tokenizer for git's machine output, which mixes NUL-terminated
 * records (`-z`) with LF-terminated patch lines in one stream. A parser is a
 * generator that yields what it wants next (a NUL-terminated token, an
 * LF-terminated line, or a peek at the next byte) and receives it; the driver
 * feeds stdout chunks as they arrive and drops what was consumed, so memory
 * holds one token at a time, whatever the size of the output.
 *
 * @internal
 */

export const NUL = 0 as const
export const LF = 10 as const
/** Ask for the next byte without consuming it (`-1` at the end of input). */
export const PEEK = -1 as const

export type Want = typeof NUL | typeof LF | typeof PEEK

/** A token without its terminator, `null` at the end of input; for PEEK, the next byte or -1. */
export type Got = Uint8Array | number | null

export type Parser<R> = Generator<Want, R, Got>

const decoder = new TextDecoder("utf-8")

/** Decodes bytes as UTF-8 (invalid sequences become U+FFFD). */
export const text = (bytes: Uint8Array): string => decoder.decode(bytes)

/** Drives a parser over chunks of bytes. */
export class Tokenizer<R> {
  private buffer: Uint8Array = new Uint8Array(0)
  private start = 0
  private scanned = 0
  private want: Want
  private done = false
  private value: R | undefined
  private readonly parser: Parser<R>

  constructor(parser: Parser<R>) {
    this.parser = parser
    const first = parser.next(null)
    if (first.done) {
      this.done = true
      this.value = first.value
      this.want = NUL
    } else this.want = first.value
  }

  /** Feeds the next chunk of output. */
  feed(chunk: Uint8Array): void {
    if (this.done) return
    this.append(chunk)
    this.drain(false)
  }

  /** Signals the end of output and returns the parser's result. */
  end(): R {
    if (!this.done) this.drain(true)
    while (!this.done) this.step(this.want === PEEK ? -1 : null)
    return this.value as R
  }

  private append(chunk: Uint8Array): void {
    const live = this.buffer.length - this.start
    if (live === 0) {
      this.buffer = chunk
      this.start = 0
      this.scanned = 0
      return
    }
    const next = new Uint8Array(live + chunk.length)
    next.set(this.buffer.subarray(this.start), 0)
    next.set(chunk, live)
    this.scanned -= this.start
    this.buffer = next
    this.start = 0
  }

  private step(got: Got): void {
    const r = this.parser.next(got)
    if (r.done) {
      this.done = true
      this.value = r.value
    } else {
      this.want = r.value
      this.scanned = this.start
    }
  }

  private drain(atEnd: boolean): void {
    while (!this.done) {
      const buf = this.buffer
      if (this.want === PEEK) {
        if (this.start < buf.length) this.step(buf[this.start]!)
        else if (atEnd) this.step(-1)
        else return
        continue
      }
      const at = buf.indexOf(this.want, Math.max(this.scanned, this.start))
      if (at === -1) {
        this.scanned = buf.length
        if (!atEnd) return
        if (this.start < buf.length) {
          const last = buf.subarray(this.start)
          this.start = buf.length
          this.step(last)
        } else this.step(null)
        continue
      }
      const token = buf.subarray(this.start, at)
      this.start = at + 1
      this.step(token)
    }
  }
}

/** Runs a parser over a complete output. */
export const parseAll = <R>(parser: Parser<R>, bytes: Uint8Array): R => {
  const t = new Tokenizer(parser)
  t.feed(bytes)
  return t.end()
}
