export interface Logger {
  info(message: string): void
  warn(message: string): void
  error(message: string): void
  /** One answered request as fields (a structured log); without it, `info` gets a text line. */
  request?(entry: RequestEntry): void
}

/** What the log keeps of a request: never its query, its headers or its body (secrets ride there). */
export interface RequestEntry {
  ip: string | undefined
  method: string
  /** The path as requested, with a pairing's user code cut out. */
  path: string
  /** The route it matched (`/v1/asks/:id`), or `unmatched`. */
  route: string
  status: number
  ms: number
}

/**
 * The log's lines are written to stderr once per turn of the event loop, not one write each: a
 * change that wakes 3,000 long-polls logs 3,000 lines, and a write per line was a tenth of the
 * server's CPU for that wake-up (bench/README.md, "Fan-out"). A line waits at most until the
 * current turn ends (or 64 KiB have gathered), and whatever is gathered is written when the
 * process exits.
 */
let pending = ''
let scheduled = false
let exitHooked = false
const FLUSH_AT = 64 * 1024

/** Writes the gathered lines now (before anything else is written to stderr directly). */
export function flushLog(): void {
  scheduled = false
  if (pending === '') return
  const out = pending
  pending = ''
  process.stderr.write(out)
}

function writeLine(text: string): void {
  if (!exitHooked) {
    exitHooked = true
    process.on('exit', flushLog)
  }
  pending += text
  if (pending.length >= FLUSH_AT) flushLog()
  else if (!scheduled) {
    scheduled = true
    setImmediate(flushLog)
  }
}

const line = (level: string, message: string) =>
  writeLine(`${new Date().toISOString()} ${level} ${message}\n`)

/** Logs to stderr, one line per event, so stdout stays free for what commands print. */
export const stderrLogger: Logger = {
  info: (m) => line('info', m),
  warn: (m) => line('warn', m),
  error: (m) => line('error', m),
}

const json = (fields: Record<string, unknown>) =>
  writeLine(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`)

/**
 * `--log-format json`: one JSON object per line on stderr, for a log shipper (Loki, Vector,
 * journald's JSON output): `time`, `level`, then `msg`, or a request's fields.
 */
export const jsonLogger: Logger = {
  info: (msg) => json({ level: 'info', msg }),
  warn: (msg) => json({ level: 'warn', msg }),
  error: (msg) => json({ level: 'error', msg }),
  request: (e) =>
    json({
      level: 'info',
      method: e.method,
      route: e.route,
      path: e.path,
      status: e.status,
      duration_ms: Number(e.ms.toFixed(1)),
      ip: e.ip ?? null,
    }),
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} }
