import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  from: string
  to: string[]
  subject: string
  /** The decoded text body. */
  text: string
  /** The login code in it (the indented line of 8 digits). */
  code: string
  raw: string
}

/** A real SMTP listener on 127.0.0.1: what the server's mailer sends arrives here. */
export interface MailTrap {
  url: string
  mails: ReceivedMail[]
  /** The next mail to `to` not yet taken, waiting for it up to `timeoutMs`. */
  next(to: string, timeoutMs?: number): Promise<ReceivedMail>
  /** Mails to `to` received so far. */
  to(to: string): ReceivedMail[]
  close(): Promise<void>
}

function decodeQuotedPrintable(text: string): string {
  return text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n')
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ')
  let text = raw.slice(split + 4)
  const header = (name: string) =>
    new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? ''
  if (/quoted-printable/i.test(header('Content-Transfer-Encoding'))) {
    text = decodeQuotedPrintable(text)
  }
  text = text.replace(/\r\n/g, '\n')
  const code = /^ {4}(\d{8})$/m.exec(text)?.[1] ?? ''
  return { from, to, subject: header('Subject'), text, code, raw }
}

export interface TrapOptions {
  /** Waits this long before the greeting: a slow SMTP server, to show no request waits for it. */
  greetingDelayMs?: number
  /** Requires these credentials (AUTH PLAIN/LOGIN, allowed without TLS here). */
  auth?: { user: string; pass: string }
  /** TLS from the first byte (smtps), with smtp-server's built-in test certificate. */
  secure?: boolean
}

export async function startMailTrap(options: TrapOptions = {}): Promise<MailTrap> {
  const mails: ReceivedMail[] = []
  const taken = new Set<ReceivedMail>()
  const waiting = new Set<() => void>()
  const { auth } = options
  const server = new SMTPServer({
    secure: options.secure === true,
    authOptional: !auth,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(given, _session, callback) {
      if (auth && given.username === auth.user && given.password === auth.pass) {
        callback(null, { user: given.username })
      } else callback(new Error('invalid credentials'))
    },
    onConnect(_session, callback) {
      setTimeout(() => callback(), options.greetingDelayMs ?? 0)
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : ''
        const to = session.envelope.rcptTo.map((r) => r.address)
        mails.push(parse(Buffer.concat(chunks).toString('utf8'), from, to))
        for (const wake of waiting) wake()
        callback()
      })
    },
  })
  // A client that gives up (a refused certificate, say) is what some tests check, not a fault.
  server.on('error', () => {})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const port = (server.server.address() as AddressInfo).port

  const untaken = (to: string) =>
    mails.find((m) => !taken.has(m) && m.to.some((a) => a.toLowerCase() === to.toLowerCase()))

  return {
    url: `${options.secure ? 'smtps' : 'smtp'}://127.0.0.1:${port}`,
    mails,
    to: (to) => mails.filter((m) => m.to.some((a) => a.toLowerCase() === to.toLowerCase())),
    async next(to, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = untaken(to)
        if (found) {
          taken.add(found)
          return found
        }
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`no mail to ${to} within ${timeoutMs} ms`)
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiting.delete(wake)
            clearTimeout(timer)
            resolve()
          }
          const timer = setTimeout(wake, left)
          waiting.add(wake)
        })
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
