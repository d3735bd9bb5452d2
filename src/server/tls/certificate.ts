import { createPrivateKey, X509Certificate } from 'node:crypto'

/**
 * A certificate Hark serves: the chain (leaf first) and its private key as PEM, and what the
 * leaf says about itself. Made only by `readCertificate`, so a pair whose key does not belong to
 * its leaf, or a leaf that does not parse, never reaches the listener.
 */
export interface Certificate {
  /** The leaf and the intermediates after it, PEM. */
  cert: string
  /** The leaf's private key, PEM. */
  key: string
  /** The DNS names the leaf covers (subjectAltName), lower case. */
  names: string[]
  notBefore: number
  notAfter: number
  /** The leaf's serial number, hex: what a log line or a test compares. */
  serial: string
}

/** Why a certificate or key cannot be served, in words an operator can act on. */
export class CertificateError extends Error {}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g

/** Checks a PEM chain and key and reads the leaf; throws `CertificateError` saying what is wrong. */
export function readCertificate(certPem: string, keyPem: string): Certificate {
  const blocks = certPem.match(PEM_CERT)
  if (!blocks || blocks.length === 0) throw new CertificateError('no PEM certificate in it')
  let leaf: X509Certificate
  try {
    leaf = new X509Certificate(blocks[0] as string)
  } catch (error) {
    throw new CertificateError(`the certificate does not parse (${(error as Error).message})`)
  }
  let key: ReturnType<typeof createPrivateKey>
  try {
    key = createPrivateKey(keyPem)
  } catch (error) {
    throw new CertificateError(`the private key does not parse (${(error as Error).message})`)
  }
  if (!leaf.checkPrivateKey(key)) {
    throw new CertificateError('the private key does not belong to the certificate')
  }
  return {
    cert: blocks.join('\n'),
    key: keyPem,
    names: dnsNames(leaf),
    notBefore: Date.parse(leaf.validFrom),
    notAfter: Date.parse(leaf.validTo),
    serial: leaf.serialNumber.toLowerCase(),
  }
}

function dnsNames(leaf: X509Certificate): string[] {
  const san = leaf.subjectAltName ?? ''
  const names = san
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.startsWith('DNS:'))
    .map((part) => part.slice(4).toLowerCase())
  return names
}

/** Whether the certificate covers `name` (a `*.` name covers one label below it). */
export function covers(certificate: Certificate, name: string): boolean {
  const wanted = name.toLowerCase()
  return certificate.names.some((n) => {
    if (n === wanted) return true
    if (!n.startsWith('*.') || !wanted.endsWith(n.slice(1))) return false
    const label = wanted.slice(0, wanted.length - n.length + 1)
    return label !== '' && !label.includes('.')
  })
}

/**
 * When to renew: 30 days before the end, or a third of the lifetime for certificates shorter
 * than 90 days (Let's Encrypt's short-lived profiles), so a short certificate is not renewed
 * as soon as it is issued.
 */
export function renewalTime(certificate: Certificate, renewBeforeMs = 30 * DAY): number {
  const lifetime = certificate.notAfter - certificate.notBefore
  return certificate.notAfter - Math.min(renewBeforeMs, lifetime / 3)
}

export const DAY = 24 * 60 * 60 * 1000
