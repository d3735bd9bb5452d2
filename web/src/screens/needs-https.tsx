import type { Info } from '../lib/types.ts'

const DOCS = 'https://github.com/hark/hark/blob/main/docs/operations.md'

/**
 * Opened over plain HTTP from another device (issue 27): passkeys, the service worker, web push
 * and installing the app all need a secure context, so none of Hark works there. Rather than a
 * log-in screen that says "This browser cannot use passkeys", say why and the three ways to get
 * HTTPS. (`localhost` on the server itself is a secure context and never sees this.)
 */
export const needsHttps = () => !window.isSecureContext

export function NeedsHttps({ info }: { info: Info | null }) {
  const base = info?.base_url
  const elsewhere = base?.startsWith('https://') && new URL(base).origin !== location.origin
  return (
    <main class="auth needs-https">
      <h1>Hark needs HTTPS</h1>
      <p class="lead">
        You opened Hark at <strong>{location.origin}</strong>, a plain HTTP address. Browsers allow
        passkeys (how you log in), notifications and installing the app only over HTTPS.
      </p>
      {elsewhere && (
        <p class="card">
          This server’s address is <a href={base}>{base}</a>: open Hark there.
        </p>
      )}
      <p>Whoever runs this server can give it HTTPS in one of three ways:</p>
      <ol class="https-ways stack">
        <li class="card stack">
          <h2>A domain name: Hark gets its own certificate</h2>
          <p>
            Point the name’s DNS at this machine, open ports 80 and 443, and start Hark with the
            name:
          </p>
          <pre>
            <code>hark serve --domain hark.example.com</code>
          </pre>
          <p class="muted">
            Or install with <code>install.sh --domain hark.example.com</code>. The certificate comes
            from Let’s Encrypt and renews itself.
          </p>
        </li>
        <li class="card stack">
          <h2>Your own reverse proxy</h2>
          <p>
            Caddy, nginx or another proxy with a certificate, in front of Hark; start Hark with{' '}
            <code>--base-url https://NAME</code>. See{' '}
            <a href={`${DOCS}#behind-a-reverse-proxy`}>Behind a reverse proxy</a>.
          </p>
        </li>
        <li class="card stack">
          <h2>A tunnel, for a box at home</h2>
          <p>
            <strong>Tailscale Serve</strong>: with Tailscale on the server and on your phone,
          </p>
          <pre>
            <code>tailscale serve --bg 8080</code>
          </pre>
          <p>
            then start Hark with <code>--base-url https://MACHINE.TAILNET.ts.net</code> (the address
            Tailscale prints) and open that on your phone.
          </p>
          <p>
            <strong>Cloudflare Tunnel</strong>:{' '}
            <code>cloudflared tunnel --url http://localhost:8080</code> prints an https address to
            try Hark at (start it with <code>--base-url</code> set to that). Passkeys belong to one
            address, so to keep Hark use a named tunnel on your own domain.
          </p>
          <p>
            <a href={`${DOCS}#reaching-hark-from-a-phone`}>Reaching Hark from a phone</a>
          </p>
        </li>
      </ol>
    </main>
  )
}
