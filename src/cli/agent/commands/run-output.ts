/**
 * What `hark run` keeps of a command's output: everything passes through to the terminal as it
 * comes, and only the last `TAIL_BYTES` stay in memory (a build that prints gigabytes costs no
 * more than one that prints a page), with a count of the lines, for the report.
 */

/** The bytes of output kept: the tail uploaded as output.txt. */
export const TAIL_BYTES = 64 * 1024
/** The lines of the tail shown in the message itself, as a code block. */
export const TAIL_LINES = 60
/** Room for those lines: sixty very long lines are cut from the start to this many characters. */
const TAIL_BLOCK_CHARS = 16 * 1024

const NEWLINE = 10

export class OutputTail {
  private chunks: Uint8Array[] = []
  private kept = 0
  private newlines = 0
  private lastByte = NEWLINE
  /** Every byte the command wrote, stdout and stderr together. */
  bytes = 0

  constructor(private readonly limit = TAIL_BYTES) {}

  add(chunk: Uint8Array): void {
    if (chunk.length === 0) return
    this.bytes += chunk.length
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, i + 1)) {
      this.newlines++
    }
    this.lastByte = chunk[chunk.length - 1] as number
    this.chunks.push(chunk)
    this.kept += chunk.length
    // Drop whole chunks while what is left still covers the limit.
    while (
      this.chunks.length > 1 &&
      this.kept - (this.chunks[0] as Uint8Array).length >= this.limit
    ) {
      this.kept -= (this.chunks.shift() as Uint8Array).length
    }
  }

  /** Lines of output, a last one without its newline included. */
  get lines(): number {
    return this.newlines + (this.lastByte === NEWLINE ? 0 : 1)
  }

  /** True when more was written than is kept. */
  get truncated(): boolean {
    return this.bytes > this.limit
  }

  /** The kept tail as text; when the start was dropped, from the first whole line on. */
  text(): string {
    const all = new Uint8Array(this.kept)
    let at = 0
    for (const c of this.chunks) {
      all.set(c, at)
      at += c.length
    }
    let bytes = all.subarray(Math.max(0, all.length - this.limit))
    if (this.truncated) {
      const firstLine = bytes.indexOf(NEWLINE)
      if (firstLine !== -1 && firstLine < bytes.length - 1) bytes = bytes.subarray(firstLine + 1)
    }
    return new TextDecoder().decode(bytes)
  }
}

// CSI sequences (colours, cursor moves), OSC sequences (titles, links) and lone escapes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: escapes are what it removes
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g

/**
 * Output as a person reads it: without colour codes, and a line redrawn with carriage returns
 * (a progress bar) as it last looked.
 */
export function readable(text: string): string {
  return text
    .replace(ANSI, '')
    .split('\n')
    .map((line) => {
      const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line
      const cr = trimmed.lastIndexOf('\r')
      return cr === -1 ? trimmed : trimmed.slice(cr + 1)
    })
    .join('\n')
}

/** The last `count` lines of `text` (no trailing newline), bounded to `TAIL_BLOCK_CHARS`. */
export function lastLines(text: string, count = TAIL_LINES): string {
  const lines = text.replace(/\n$/, '').split('\n')
  let tail = lines.slice(-count).join('\n')
  if (tail.length > TAIL_BLOCK_CHARS) {
    tail = tail.slice(-TAIL_BLOCK_CHARS)
    const cut = tail.indexOf('\n')
    tail = cut === -1 ? `…${tail}` : tail.slice(cut + 1)
  }
  return tail
}

/** `0.4 s`, `12 s`, `3 min 05 s`, `2 h 03 min`. */
export function formatDuration(ms: number): string {
  if (ms < 10_000) return `${(Math.max(0, ms) / 1000).toFixed(1)} s`
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  const pad = (n: number) => String(n).padStart(2, '0')
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`
  return `${Math.floor(s / 3600)} h ${pad(Math.floor(s / 60) % 60)} min`
}

/** The command as a shell line: words with spaces or quotes quoted; long ones cut. */
export function commandLine(command: readonly string[], max = 200): string {
  const line = command
    .map((w) => (w === '' || /[^\w@%+=:,./-]/.test(w) ? `'${w.replaceAll("'", `'\\''`)}'` : w))
    .join(' ')
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** `n` with thousands separated: 12,345. */
export const count = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`
