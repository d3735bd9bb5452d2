import type { Server } from 'bun'
import type { Config } from '../core/config.ts'
import type { Ctx } from '../core/context.ts'
import type { Logger } from '../core/log.ts'
import { loopbackLink, terminalQr } from '../core/terminal-qr.ts'
import { issueSetupToken, setupTokenFile } from '../people/setup.ts'
import { closeContext, createContext, openBlobs } from './context.ts'
import { listenOn, type Running, serveOptions, stopper } from './listen.ts'

/** Starts the HTTP server on an opened context. */
export async function startServer(
  ctx: Ctx,
  options: { idleTimeout?: number } = {},
): Promise<Running> {
  const { config } = ctx
  let server: Server<unknown>
  try {
    server = listenOn(config.host, config.port, () =>
      Bun.serve(serveOptions(ctx, options.idleTimeout)),
    )
  } catch (error) {
    await closeContext(ctx)
    throw error
  }
  ctx.server = server
  const stop = stopper(ctx, (force) => server.stop(force))
  return {
    ctx,
    server,
    url: server.url.href.replace(/\/$/, ''),
    stop,
    ready: Promise.resolve(),
  }
}

/** `hark serve`: open, listen, and shut down cleanly on SIGTERM or SIGINT. */
export async function serve(config: Config, log: Logger): Promise<void> {
  // Signal handlers go in before anything is opened: a SIGTERM that arrives while starting
  // must still shut down cleanly, not kill the process mid-write.
  let running: Running | undefined
  let stopRequested = false
  const stopped = new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      if (stopRequested) return
      log.info(`${signal}: shutting down`)
      stopRequested = true
      if (!running) return resolve()
      running.stop().then(resolve, (error) => {
        log.error(`shutdown: ${error}`)
        resolve()
      })
    }
    process.once('SIGTERM', () => onSignal('SIGTERM'))
    process.once('SIGINT', () => onSignal('SIGINT'))
    // SIGHUP reloads the certificate (--tls-cert files, or a --domain renewal) when there is
    // one, as nginx does. Otherwise, at a terminal, it keeps its old meaning (the terminal hung
    // up) and the server ends: one started in an SSH session must not outlive it, orphaned and
    // writing nowhere. Under a service manager (no terminal) `reload` is harmless.
    const atTerminal = Boolean(process.stdin.isTTY || process.stdout.isTTY)
    process.on('SIGHUP', () => {
      if (running?.reload) running.reload()
      else if (atTerminal) onSignal('SIGHUP')
      else log.info('SIGHUP: nothing to reload (no --tls-cert or --domain)')
    })
  })
  const mailer = config.smtpUrl
    ? (await import('../core/mailer.ts')).createSmtpMailer(
        config.smtpUrl,
        config.smtpFrom ?? 'hark@localhost',
      )
    : undefined
  // Files in S3: the bucket is proved reachable and writable before anything is opened, so a
  // wrong URL or a bucket that is down stops the start with its reason, never half-way.
  const blobs = config.s3Url ? openBlobs(config, '') : undefined
  if (blobs) {
    await blobs.check()
    log.info(`files are kept in ${blobs.where}`)
  }
  // Postgres when a database URL is set (docs/scaling.md), else the embedded SQLite file.
  const ctx = config.databaseUrl
    ? await (await import('./pg/context.ts')).createPgContext(config, { log, mailer, blobs })
    : await createContext(config, { log, mailer, blobs })
  // Orphans are gone before the first request (uploads would wait for them anyway).
  await ctx.filesSwept
  if (stopRequested) {
    await closeContext(ctx)
    return
  }
  // SMTP, Postgres and HTTPS (with its ACME client) load only when configured: each module a
  // start loads is run at start, and most servers use none of the three (bench/startup.ts).
  running =
    config.domains || config.tlsCert
      ? await (await import('./https.ts')).startHttps(ctx)
      : await startServer(ctx)
  // With --domain the HTTPS listener waits for its first certificate.
  await Promise.race([running.ready, stopped])
  if (stopRequested) {
    await stopped
    log.info('stopped')
    return
  }
  // The default base URL follows the port; with --port 0 that is only known now.
  if (config.port === 0 && config.baseUrl === 'http://localhost:0') {
    config.baseUrl = `http://localhost:${running.server.port}`
  }
  log.info(`hark listening on ${running.url} (base URL ${config.baseUrl}, data ${config.dataDir})`)
  // First run: only whoever holds this link (printed here, and in a 0600 file) can set up.
  const setup = await issueSetupToken(ctx)
  if (setup) {
    const file = setupTokenFile(ctx)
    // The link is the owner's capability for an hour. A person at a terminal is shown it; a log
    // that outlives the terminal (the system journal, a file) must not keep it.
    if (process.stderr.isTTY) {
      log.info(`setup needed: open ${setup} within an hour (also in ${file})`)
      // Scanned, the owner makes their passkey on the phone itself (a line of a JSON log is no
      // place for a picture). A localhost link would lead the phone nowhere: say what would.
      if (loopbackLink(setup)) {
        log.info(
          'to set up from a phone, give Hark an address it can reach over HTTPS: --domain NAME, or --base-url behind a proxy or tunnel (README)',
        )
      } else if (!log.request) process.stderr.write(`${terminalQr(setup)}\n`)
    } else log.info(`setup needed: the one-time setup link is in ${file} (valid for an hour)`)
    log.info('or, headless: hark admin user add EMAIL --owner')
  }
  await stopped
  log.info('stopped')
}
