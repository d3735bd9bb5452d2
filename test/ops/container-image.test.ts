// test-needs: root podman debootstrap
// (builds and runs the Containerfile with podman on a debootstrap base, as root. See scripts/test-parts.ts.)
import { describe, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { run } from '../binary/process.ts'
import { healthCommand } from './containerfile.ts'
import {
  freePort,
  IMAGE,
  logsOf,
  must,
  names,
  podman,
  runFlags,
  skipped,
  timed,
  timings,
  useImage,
  VOLUME,
  waitHealthy,
  work,
} from './podman.ts'

/**
 * The image built from the Containerfile, where podman can run containers (rootful, as CI runs;
 * test/ops/podman.ts builds it): non-root, /health on the mapped port, the health check passing
 * (and failing when nothing answers), the setup link in /data/setup-token, data kept across a
 * SIGTERM stop, a start and a new container on the same volume.
 */
describe('the image under podman', () => {
  useImage()

  test('the image: non-root user, /data volume, health check, entrypoint', async () => {
    if (skipped()) return
    const [image] = JSON.parse(must(await podman(['image', 'inspect', IMAGE]), 'inspect')) as {
      Config: Record<string, unknown>
      Healthcheck?: { Test: string[] }
    }[]
    expect(image?.Config).toMatchObject({
      User: '10001:10001',
      Volumes: { '/data': {} },
      WorkingDir: '/data',
      Entrypoint: ['/usr/local/bin/hark'],
      Cmd: ['serve'],
      StopSignal: 'SIGTERM',
      ExposedPorts: { '8080/tcp': {} },
    })
    expect(image?.Config.Env).toEqual(
      expect.arrayContaining(['HARK_DATA=/data', 'HARK_HOST=0.0.0.0', 'HARK_PORT=8080']),
    )
    expect(image?.Healthcheck?.Test).toEqual(['CMD', ...healthCommand()])
  })

  const port = freePort()
  const url = `http://127.0.0.1:${port}`
  let agentToken = ''
  let messageId = ''
  const agentEnv = () => ({
    HARK_URL: url,
    HARK_TOKEN: agentToken,
    XDG_CONFIG_HOME: join(work, 'config'),
  })
  /** A container of the image on the volume and the port, named `name`. */
  const runOn = (name: string) =>
    podman([
      'run',
      '--detach',
      '--name',
      name,
      ...runFlags,
      '--publish',
      `127.0.0.1:${port}:8080`,
      '--volume',
      `${VOLUME}:/data`,
      '--env',
      `HARK_BASE_URL=${url}`,
      IMAGE,
    ])

  test('first run: /health on the mapped port as uid 10001, the health check passes, the setup link is in /data/setup-token', async () => {
    if (skipped()) return
    must(await timed('run', () => runOn(names.first)), 'podman run')
    expect(await timed('until healthy', () => waitHealthy(url, names.first))).toEqual({ ok: true })

    // The server itself (PID 1 in the container) runs as the hark user, not root.
    const status = must(await podman(['exec', names.first, 'cat', '/proc/1/status']), 'exec')
    expect(status).toMatch(/^Uid:\s+10001\s+10001\s+10001\s+10001$/m)
    expect(status).toMatch(/^Gid:\s+10001\s+10001\s+10001\s+10001$/m)

    const health = await timed('healthcheck run', () => podman(['healthcheck', 'run', names.first]))
    expect(health).toMatchObject({ code: 0 })

    // Off a terminal the log names the file, never the link (a log outlives the terminal).
    const link = must(await podman(['exec', names.first, 'cat', '/data/setup-token']), 'exec cat')
    expect(link.trim()).toMatch(new RegExp(`^${url}/setup#token=[A-Za-z0-9]{32}$`))
    const log = await logsOf(names.first)
    expect(log).toContain('setup needed: the one-time setup link is in /data/setup-token')
    expect(log).not.toContain(link.trim().split('#token=')[1] as string)

    // On the host, the named volume holds the data, the user's own.
    const [mount] = JSON.parse(
      must(await podman(['container', 'inspect', '--format', '{{json .Mounts}}', names.first]), ''),
    ) as { Type: string; Name: string; Destination: string; Source: string }[]
    expect(mount).toMatchObject({ Type: 'volume', Name: VOLUME, Destination: '/data' })
    const token = statSync(join(mount?.Source as string, 'setup-token'))
    expect(token.uid).toBe(10001)
    expect(token.mode & 0o777).toBe(0o600)
    expect(statSync(join(mount?.Source as string, 'hark.db')).uid).toBe(10001)
  }, 120_000)

  test('hark admin in the container makes the owner and an agent token; the agent sends', async () => {
    if (skipped()) return
    const exec = (args: string[]) => podman(['exec', names.first, 'hark', 'admin', ...args])
    must(await exec(['user', 'add', 'owner@example.com', '--owner']), 'admin user add')
    const out = must(
      await exec(['channel', 'add', '--user', 'owner@example.com', '--label', 'Box']),
      'admin channel add',
    )
    agentToken = out.trim().split('\n').at(-1) as string
    expect(agentToken.length).toBeGreaterThan(20)
    const sent = await run(['send', 'before the restart', '--json'], agentEnv())
    expect(sent).toMatchObject({ code: 0 })
    messageId = (JSON.parse(sent.stdout) as { message: { id: string } }).message.id
    expect(messageId).toBeTruthy()
  }, 60_000)

  test('podman stop: SIGTERM, a clean exit 0 well within the 10 s timeout; start again with the data', async () => {
    if (skipped()) return
    const started = performance.now()
    must(await podman(['stop', '--time', '10', names.first]), 'podman stop')
    const ms = performance.now() - started
    timings.stop = Math.round(ms)
    expect(ms).toBeLessThan(8000)
    const exit = must(
      await podman(['container', 'inspect', '--format', '{{.State.ExitCode}}', names.first]),
      'inspect',
    )
    expect(exit.trim()).toBe('0')
    const log = await logsOf(names.first)
    expect(log).toContain('SIGTERM: shutting down')
    expect(log).toMatch(/info stopped\b/)

    must(await podman(['start', names.first]), 'podman start')
    await waitHealthy(url, names.first)
    const status = await run(['status', '--json'], agentEnv())
    expect(status).toMatchObject({ code: 0 })
    expect(status.stdout).toContain('Box')
  }, 60_000)

  test('a new container on the same volume keeps everything: the token works, the message is there, no setup', async () => {
    if (skipped()) return
    must(await podman(['rm', '--force', '--time', '10', names.first]), 'podman rm')
    must(await runOn(names.second), 'podman run (second)')
    await waitHealthy(url, names.second)
    const status = await run(['status', '--json'], agentEnv())
    expect(status).toMatchObject({ code: 0 })
    expect(status.stdout).toContain('Box')
    // Editing the message sent before needs it to still be there.
    const edited = await run(['edit', messageId, '--text', 'after a new container'], agentEnv())
    expect(edited).toMatchObject({ code: 0 })
    // With an owner, a start removes the setup link and asks for no setup.
    const log = await logsOf(names.second)
    expect(log).not.toContain('setup needed')
    expect((await podman(['exec', names.second, 'test', '-e', '/data/setup-token'])).code).toBe(1)
    expect(await podman(['healthcheck', 'run', names.second])).toMatchObject({ code: 0 })
  }, 60_000)

  test('without -v /data is still a volume; the health check fails when nothing answers on HARK_PORT', async () => {
    if (skipped()) return
    // Listening elsewhere than HARK_PORT: the check (which probes HARK_PORT) must say unhealthy.
    must(
      await podman([
        'run',
        '--detach',
        '--name',
        names.probe,
        ...runFlags,
        '--network',
        'none',
        IMAGE,
        'serve',
        '--port',
        '8081',
      ]),
      'podman run (probe)',
    )
    const deadline = Date.now() + 30_000
    while (!(await logsOf(names.probe)).includes('listening on') && Date.now() < deadline) {
      await Bun.sleep(100)
    }
    expect(await logsOf(names.probe)).toContain('listening on http://0.0.0.0:8081')
    const health = await podman(['healthcheck', 'run', names.probe])
    expect(health.code).not.toBe(0)
    const [mount] = JSON.parse(
      must(await podman(['container', 'inspect', '--format', '{{json .Mounts}}', names.probe]), ''),
    ) as { Type: string; Destination: string }[]
    expect(mount).toMatchObject({ Type: 'volume', Destination: '/data' })
    must(await podman(['rm', '--force', '--volumes', '--time', '10', names.probe]), 'podman rm')
  }, 60_000)
})
