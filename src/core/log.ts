export interface Logger {
  info(message: string): void
  warn(message: string): void
  error(message: string): void
}

const line = (level: string, message: string) => `${new Date().toISOString()} ${level} ${message}\n`

/** Logs to stderr, one line per event, so stdout stays free for what commands print. */
export const stderrLogger: Logger = {
  info: (m) => process.stderr.write(line('info', m)),
  warn: (m) => process.stderr.write(line('warn', m)),
  error: (m) => process.stderr.write(line('error', m)),
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} }
