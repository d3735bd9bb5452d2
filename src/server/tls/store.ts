import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { replaceFileSynced, syncFolderNow } from '../../core/durable-files.ts'
import { type Certificate, CertificateError, readCertificate } from './certificate.ts'

/**
 * Where an obtained certificate and the ACME account key live: `DATA/tls/`, mode 0700, each file
 * 0600 whatever the umask. The certificate and its key are one file, written to a temporary
 * name and renamed, so a crash never leaves a chain beside another chain's key.
 */
export interface CertificateFiles {
  dir: string
  /** The saved certificate, if there is one that parses and whose key matches. */
  load(): Certificate | undefined
  save(certificate: Certificate): void
  /** The ACME account's key (PEM), made by `make` on first use and kept. */
  accountKey(make: () => Promise<string>): Promise<string>
  /** The account's URL at `directory`, once registered there (no registration per order). */
  accountUrl(directory: string): string | undefined
  saveAccountUrl(directory: string, url: string): void
}

const CERTIFICATE = 'certificate.pem'
const ACCOUNT_KEY = 'acme-account.key'
const ACCOUNTS = 'acme-accounts.json'

export function certificateFiles(dataDir: string): CertificateFiles {
  const dir = join(dataDir, 'tls')
  const ensureDir = () => {
    if (mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined) syncFolderNow(dataDir)
    chmodSync(dir, 0o700)
  }
  // A power cut never leaves an empty key or certificate in place.
  const writePrivate = (name: string, text: string) => {
    ensureDir()
    replaceFileSynced(join(dir, name), text, 0o600)
  }
  const readAccounts = (): Record<string, string> => {
    const path = join(dir, ACCOUNTS)
    if (!existsSync(path)) return {}
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8'))
      return typeof parsed === 'object' && parsed !== null ? parsed : {}
    } catch {
      return {}
    }
  }
  return {
    dir,
    load() {
      const path = join(dir, CERTIFICATE)
      if (!existsSync(path)) return undefined
      const text = readFileSync(path, 'utf8')
      const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----/.exec(
        text,
      )
      try {
        return readCertificate(text, key?.[0] ?? '')
      } catch (error) {
        if (error instanceof CertificateError) return undefined
        throw error
      }
    },
    save(certificate) {
      writePrivate(CERTIFICATE, `${certificate.key.trim()}\n${certificate.cert.trim()}\n`)
    },
    async accountKey(make) {
      const path = join(dir, ACCOUNT_KEY)
      if (existsSync(path)) return readFileSync(path, 'utf8')
      const key = await make()
      writePrivate(ACCOUNT_KEY, key)
      return key
    },
    accountUrl(directory) {
      return readAccounts()[directory]
    },
    saveAccountUrl(directory, url) {
      writePrivate(
        ACCOUNTS,
        `${JSON.stringify({ ...readAccounts(), [directory]: url }, null, 2)}\n`,
      )
    },
  }
}
