/**
 * `bun bench/web-speed.ts --profile`: where the browser's time goes. The app is served from a
 * readable bundle (not minified, so each module keeps Bun's `// path` header and the CPU
 * profile's lines name the module), and around one fresh load and the scroll it takes a V8 CPU
 * profile (JavaScript self time by module: marked, DOMPurify, Preact, the app's files) and a
 * Chromium trace (the renderer's main thread, self time by event: script, style, layout,
 * paint, garbage collection).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, CDPSession, Page } from 'playwright-core'

export interface Readable {
  serve(page: Page): Promise<void>
  moduleAt(line: number): string
}

export async function profiledBundle(): Promise<Readable> {
  const out = mkdtempSync(join(tmpdir(), 'hark-profile-'))
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, '..', 'web', 'src', 'main.tsx')],
    outdir: out,
    target: 'browser',
    minify: false,
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const js = result.outputs.find((o) => o.path.endsWith('.js'))
  if (!result.success || !js) throw new Error('the readable bundle failed')
  const text = await js.text()
  // Bun starts each module with a `// path` line: the module of a line is the last one above.
  const starts: { line: number; name: string }[] = []
  text.split('\n').forEach((l, i) => {
    const m = /^\/\/ ((?:node_modules|web|src)\/\S+)$/.exec(l)
    if (m) starts.push({ line: i, name: moduleName(m[1] as string) })
  })
  return {
    async serve(page) {
      await page.route('**/assets/main-*.js', (route) =>
        route.fulfill({ body: text, contentType: 'text/javascript' }),
      )
    },
    moduleAt(line) {
      let name = '(bundle)'
      for (const s of starts) {
        if (s.line > line) break
        name = s.name
      }
      return name
    },
  }
}

/** A package by its name; the app's own files by path. */
function moduleName(path: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)
  return pkg ? (pkg[1] as string) : path
}

export interface Profiled {
  report(label: string, moduleAt: (line: number) => string): Promise<void>
}

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
}
interface TraceEvent {
  ph: string
  name: string
  pid: number
  tid: number
  ts: number
  dur?: number
  args?: { name?: string; data?: { functionName?: string } }
}

export async function profileStart(browser: Browser, page: Page, cdp: CDPSession) {
  await cdp.send('Profiler.enable')
  await cdp.send('Profiler.setSamplingInterval', { interval: 250 })
  await cdp.send('Profiler.start')
  await browser.startTracing(page, {
    categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8'],
  })
  return {
    async report(label: string, moduleAt: (line: number) => string) {
      const { profile } = await cdp.send('Profiler.stop')
      const trace = JSON.parse((await browser.stopTracing()).toString()) as {
        traceEvents: TraceEvent[]
      }
      const byNode = new Map<number, string>()
      const fnOf = new Map<number, string>()
      for (const n of profile.nodes as ProfileNode[]) {
        const { functionName, url, lineNumber } = n.callFrame
        fnOf.set(n.id, `${functionName || '(anonymous)'} ${moduleAt(lineNumber)}:${lineNumber}`)
        byNode.set(
          n.id,
          url.includes('/assets/main-')
            ? moduleAt(lineNumber)
            : functionName.startsWith('(')
              ? functionName
              : url || `native ${functionName}`,
        )
      }
      const js = new Map<string, number>()
      const fns = new Map<string, number>()
      const samples = profile.samples ?? []
      const deltas = profile.timeDeltas ?? []
      for (let i = 0; i < samples.length; i++) {
        const name = byNode.get(samples[i] as number) ?? '?'
        // A sample's time is the delta to the next one.
        js.set(name, (js.get(name) ?? 0) + (deltas[i + 1] ?? 0) / 1000)
        const fn = fnOf.get(samples[i] as number) ?? '?'
        if (!name.startsWith('(')) fns.set(fn, (fns.get(fn) ?? 0) + (deltas[i + 1] ?? 0) / 1000)
      }
      print(`${label}, V8 CPU profile (self time by module)`, js, ['(idle)'])
      print(`${label}, the same by function (script only)`, fns)
      print(
        `${label}, renderer main thread (self time by trace event)`,
        selfTimes(mainThread(trace.traceEvents)),
      )
      longestTasks(label, mainThread(trace.traceEvents))
    },
  }
}

/** The complete events of the busiest renderer main thread. */
function mainThread(events: TraceEvent[]): TraceEvent[] {
  const mains = new Set(
    events
      .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
      .map((e) => `${e.pid}:${e.tid}`),
  )
  const threads = new Map<string, TraceEvent[]>()
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`
    if (e.ph !== 'X' || !mains.has(key) || e.dur === undefined) continue
    threads.set(key, [...(threads.get(key) ?? []), e])
  }
  return [...threads.values()].sort((a, b) => b.length - a.length)[0] ?? []
}

/** The longest tasks, each with the events that took most of it. */
function longestTasks(label: string, main: TraceEvent[]) {
  const tasks = main.filter((e) => e.name === 'RunTask').sort((a, b) => (b.dur ?? 0) - (a.dur ?? 0))
  console.log(`  ${label}, the longest tasks:`)
  for (const t of tasks.slice(0, 6)) {
    const end = t.ts + (t.dur ?? 0)
    // A function call by the function's name (the readable bundle's).
    const named = main
      .filter((e) => e.ts >= t.ts && e.ts + (e.dur ?? 0) <= end)
      .map((e) => {
        const fn = e.args?.data?.functionName
        return e.name === 'FunctionCall' && fn ? { ...e, name: `${e.name} ${fn}` } : e
      })
    const inside = selfTimes(named)
    const top = [...inside]
      .filter(([n]) => n !== 'RunTask')
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([n, ms]) => `${n} ${ms.toFixed(0)}`)
    console.log(`    ${((t.dur ?? 0) / 1000).toFixed(0).padStart(5)} ms: ${top.join(', ')}`)
  }
}

/** Self time of each event (nested events' time is their own, not their parent's). */
function selfTimes(events: TraceEvent[]): Map<string, number> {
  const busiest = [...events].sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0))
  const self = new Map<string, number>()
  const stack: { end: number; name: string }[] = []
  for (const e of busiest) {
    const end = e.ts + (e.dur ?? 0)
    while (stack.length && (stack.at(-1) as { end: number }).end <= e.ts) stack.pop()
    const parent = stack.at(-1)
    if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - (e.dur ?? 0) / 1000)
    self.set(e.name, (self.get(e.name) ?? 0) + (e.dur ?? 0) / 1000)
    stack.push({ end, name: e.name })
  }
  return self
}

function print(title: string, times: Map<string, number>, leaveOut: string[] = []) {
  const rows = [...times].filter(([n]) => !leaveOut.includes(n)).sort((a, b) => b[1] - a[1])
  const total = rows.reduce((a, [, t]) => a + t, 0)
  console.log(`  ${title}: ${total.toFixed(0)} ms`)
  for (const [name, t] of rows.slice(0, 14)) {
    console.log(
      `    ${t.toFixed(0).padStart(6)} ms ${((100 * t) / total).toFixed(1).padStart(5)}%  ${name}`,
    )
  }
}
