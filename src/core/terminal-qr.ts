import { encode } from 'uqr'

/**
 * A link as a QR code a phone's camera reads off a terminal (issue 27): the setup link of
 * `hark serve`, the pairing link of `hark init`, the sign-in link of `hark admin user add|link`.
 *
 * Two rows of modules per line of text (half blocks), dark modules drawn in black on a white
 * background set explicitly with ANSI colours: the code reads the same on a dark terminal and a
 * light one (a code drawn in the terminal's own colours comes out inverted on one of them, which
 * some cameras do not read). Medium error correction and a quiet zone of two modules: small
 * enough for an 80-column terminal with a link of a few hundred characters.
 */
const BORDER = 2
const ON = '\x1b[30;107m'
const OFF = '\x1b[0m'

/** The dark modules, `size` by `size`, quiet zone included. */
export function qrModules(text: string): boolean[][] {
  return encode(text, { ecc: 'M', border: BORDER }).data
}

export function terminalQr(text: string): string {
  const rows = qrModules(text)
  const dark = (y: number, x: number) => rows[y]?.[x] === true
  const lines: string[] = []
  for (let y = 0; y < rows.length; y += 2) {
    let line = ''
    for (let x = 0; x < rows.length; x++) {
      const top = dark(y, x)
      const bottom = dark(y + 1, x)
      line += top && bottom ? '█' : top ? '▀' : bottom ? '▄' : ' '
    }
    lines.push(`${ON}${line}${OFF}`)
  }
  return `${lines.join('\n')}\n`
}

/** A link on this machine itself (`localhost`, loopback): a phone that scans it reaches nothing. */
export function loopbackLink(link: string): boolean {
  const host = new URL(link).hostname.replace(/^\[|\]$/g, '')
  return (
    host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1'
  )
}

/**
 * Whether to print a QR code of `link` on a stream: always with `--qr`, never with `--no-qr`,
 * else only when it is a terminal (a script reading the link wants the link, not a picture of
 * it) and the link is not on this machine only.
 */
export function wantsQr(
  flags: ReadonlyMap<string, unknown>,
  stream: { isTTY?: boolean },
  link: string,
): boolean {
  if (flags.has('no-qr')) return false
  return flags.has('qr') || (stream.isTTY === true && !loopbackLink(link))
}
