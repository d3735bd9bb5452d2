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

const line = (level: string, message: string) => `${new Date().toISOString()} ${level} ${message}\n`

/** Logs to stderr, one line per event, so stdout stays free for what commands print. */
export const stderrLogger: Logger = {
  info: (m) => process.stderr.write(line('info', m)),
  warn: (m) => process.stderr.write(line('warn', m)),
  error: (m) => process.stderr.write(line('error', m)),
}

const json = (fields: Record<string, unknown>) =>
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`)

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
