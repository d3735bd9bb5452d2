import { readFileSync } from 'node:fs'
import type { Server } from 'bun'
import type { Ctx } from '../core/context.ts'
import { closeContext } from './context.ts'
import { listenOn, type Running, StartupError, serveOptions, stopper } from './listen.ts'
import type { Challenges } from './tls/acme.ts'
import { orderCertificate } from './tls/acme.ts'
import type { Certificate } from './tls/certificate.ts'
import { challengeAndRedirect, SwappingServer } from './tls/listener.ts'
import { OwnCertificate } from './tls/own-files.ts'
import { Renewal } from './tls/renewal.ts'
import { certificateFiles } from './tls/store.ts'

/**
 * Linux resets the connections still queued on a listener when it closes, unless
 * `net.ipv4.tcp_migrate_req` hands them to another listener of the port (5.14+): with it, a
 * certificate swap resets no connection (bench/tls.ts counted 1 in 2,300 new connections
 * without it, none with it). Said once at start when it is off.
 */
function hintMigrateReq(log: Ctx['log']): void {
  let value: string
  try {
    value = readFileSync('/proc/sys/net/ipv4/tcp_migrate_req', 'utf8').trim()
  } catch {
    return
  }
  if (value === '0') {
    log.info(
      'TLS: net.ipv4.tcp_migrate_req is 0: a connection arriving just as a new certificate is swapped in may be reset; sysctl -w net.ipv4.tcp_migrate_req=1 avoids it (docs/operations.md "HTTPS")',
    )
  }
}

/** How often `--tls-cert`'s files are looked at for a change. */
const OWN_FILES_CHECK_MS = 5000

/** What `startHttps` hands a test beside `Running`: the certificate's keeper. */
export interface RunningHttps extends Running {
  /** With --domain: orders, renews; `renewNow()` forces a renewal. */
  renewal?: Renewal
  /** With --tls-cert: the files' watcher. */
  own?: OwnCertificate
  /** The plain-HTTP listener (redirects, ACME challenges), when there is one. */
  http?: Server<unknown>
  /** Resolves once listeners of earlier certificates have stopped. */
  whenDrained(): Promise<void>
}

/**
 * `hark serve` serving HTTPS itself (docs/operations.md "HTTPS"): with `--domain`, a certificate
 * from an ACME CA (saved in DATA/tls, renewed in the background, swapped in without a restart);
 * with `--tls-cert`, the operator's own files, reloaded when they change or on SIGHUP. The
 * plain-HTTP port answers the CA's challenges and redirects everything else to https.
 */
export async function startHttps(ctx: Ctx): Promise<RunningHttps> {
  const { config, log } = ctx
  const options = serveOptions(ctx)
  let swapping: SwappingServer | undefined
  let http: Server<unknown> | undefined
  let renewal: Renewal | undefined
  let own: OwnCertificate | undefined
  let markReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    markReady = resolve
  })
  // The first certificate starts the HTTPS listener; each later one is swapped in.
  const serveCertificate = (certificate: Certificate) => {
    if (swapping) return swapping.swap(certificate)
    swapping = listenOn(config.host, config.port, () => {
      return new SwappingServer(
        options,
        certificate,
        (server) => {
          ctx.server = server
        },
        config.tlsDrainMs,
      )
    })
    markReady()
  }
  try {
    if (config.tlsCert && config.tlsKey) {
      try {
        own = new OwnCertificate(config.tlsCert, config.tlsKey, log, (c) => serveCertificate(c))
      } catch (error) {
        throw new StartupError(
          `cannot use --tls-cert ${config.tlsCert}: ${(error as Error).message}`,
        )
      }
      serveCertificate(own.current)
      own.watch(config.tlsCheckMs ?? OWN_FILES_CHECK_MS)
    }
    const challenges: Challenges = new Map()
    if (config.httpPort !== undefined) {
      const httpPort = config.httpPort
      http = listenOn(config.host, httpPort, () =>
        challengeAndRedirect({
          hostname: config.host,
          port: httpPort,
          challenges,
          names: config.domains ?? [new URL(config.baseUrl).hostname],
          httpsPort: () => swapping?.server.port ?? config.port,
          ready: () => swapping !== undefined,
          reusePort: config.reusePort === true,
        }),
      )
    }
    if (config.domains) {
      const files = certificateFiles(config.dataDir)
      const directoryCa = config.acmeCa ? readFileSync(config.acmeCa, 'utf8') : undefined
      renewal = new Renewal({
        names: config.domains,
        files,
        clock: ctx.clock,
        log,
        renewBeforeMs: config.acmeRenewBeforeMs,
        order: (names) =>
          orderCertificate(
            {
              directory: config.acmeDirectory as string,
              email: config.acmeEmail,
              directoryCa,
              files,
              challenges,
            },
            names,
          ),
        onCertificate: serveCertificate,
      })
      const saved = renewal.start()
      if (saved) serveCertificate(saved)
      else
        log.info(
          `TLS: no certificate yet; HTTPS on port ${config.port} starts once one is obtained`,
        )
    }
  } catch (error) {
    renewal?.stop()
    own?.stop()
    await Promise.all([swapping?.stop(true), http?.stop(true)])
    await closeContext(ctx)
    throw error
  }
  hintMigrateReq(log)
  ctx.tlsNotAfter = () => (own?.current ?? renewal?.certificate)?.notAfter
  const stop = stopper(ctx, async (force) => {
    renewal?.stop()
    own?.stop()
    await Promise.all([swapping?.stop(force), http?.stop(force)])
  })
  const scheme = (server: Server<unknown> | undefined) =>
    server ? `https://${config.host}:${server.port}` : `(HTTPS not started; HTTP on ${http?.port})`
  return {
    ctx,
    get server() {
      return (swapping?.server ?? http) as Server<unknown>
    },
    get url() {
      return scheme(swapping?.server)
    },
    stop,
    ready,
    renewal,
    own,
    http,
    whenDrained: async () => await swapping?.whenDrained(),
    reload() {
      if (own) own.reload('SIGHUP')
      else if (renewal && renewal.certificate === undefined) void renewal.renewNow()
      else log.info('SIGHUP: the certificate is renewed by itself before it ends')
    },
  }
}
