/**
 * "Chrome on Android" out of a User-Agent string: how devices are named to the person in the
 * passkey, session and push-device lists. Shared by the server and the web app (one parser).
 * Returns undefined when it recognises neither the browser nor the system.
 */
export function deviceLabel(userAgent: string | null | undefined): string | undefined {
  const ua = userAgent ?? ''
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /OPR\//.test(ua)
      ? 'Opera'
      : /Firefox\//.test(ua)
        ? 'Firefox'
        : /Chrom(e|ium)\//.test(ua)
          ? 'Chrome'
          : /Safari\//.test(ua)
            ? 'Safari'
            : ''
  const os = /Android/.test(ua)
    ? 'Android'
    : /iPhone|iPad|iOS/.test(ua)
      ? 'iOS'
      : /Mac OS X|Macintosh/.test(ua)
        ? 'macOS'
        : /Windows/.test(ua)
          ? 'Windows'
          : /Linux|X11/.test(ua)
            ? 'Linux'
            : ''
  if (browser && os) return `${browser} on ${os}`
  return browser || os || undefined
}
