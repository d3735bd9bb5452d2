/**
 * The top frames of a CPU profile (`bun --cpu-prof`'s `.cpuprofile`), by sample count: every
 * sample weighs the same, so the wall-clock gap of a process the machine descheduled does not
 * inflate whatever frame happened to be on the stack (the `--cpu-prof-md` summary weighs
 * samples by time, and on a shared machine a few samples then carry seconds). Prints the
 * busiest frames by self samples, then by inclusive samples (a frame counted once per sample),
 * the latter limited to the project's code, bun:sqlite and Elysia.
 *
 *   bun bench/profile-top.ts PROFILE.cpuprofile [SELF_ROWS] [INCLUSIVE_ROWS]
 *
 * How the send path's profiles were taken (bench/README.md, "The send path, second pass").
 */
// A module (not a script): its names do not meet the DOM's globals (`parent`, `frames`, `self`).
export {}

interface Frame {
  functionName: string
  url: string
  lineNumber: number
}
interface Profile {
  nodes: { id: number; callFrame: Frame; children?: number[] }[]
  samples: number[]
}

const file = process.argv[2]
if (!file) throw new Error('usage: bun bench/profile-top.ts PROFILE.cpuprofile [SELF] [INCLUSIVE]')
const profile = (await Bun.file(file).json()) as Profile
const parent = new Map<number, number>()
const frames = new Map<number, Frame>()
for (const node of profile.nodes) {
  frames.set(node.id, node.callFrame)
  for (const child of node.children ?? []) parent.set(child, node.id)
}
const nameOf = (id: number) => {
  const f = frames.get(id) as Frame
  const where = f.url.replace(/^.*\/(src|node_modules)\//, '$1/')
  return `${f.functionName || '(anonymous)'} ${where}${f.url ? `:${f.lineNumber + 1}` : ''}`.trim()
}
const ownCounts = new Map<string, number>()
const inclusive = new Map<string, number>()
let busy = 0
for (const sample of profile.samples) {
  const top = nameOf(sample)
  if (top === '(idle)' || top === '(program)' || top === '(garbage collector)') continue
  busy++
  ownCounts.set(top, (ownCounts.get(top) ?? 0) + 1)
  const seen = new Set<string>()
  for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
    const name = nameOf(id)
    if (seen.has(name)) continue
    seen.add(name)
    inclusive.set(name, (inclusive.get(name) ?? 0) + 1)
  }
}
const show = (counts: Map<string, number>, rows: number, keep: (name: string) => boolean) => {
  const top = [...counts].filter(([name]) => keep(name)).sort((a, b) => b[1] - a[1])
  for (const [name, n] of top.slice(0, rows)) {
    console.log(`${((100 * n) / busy).toFixed(1).padStart(5)}%  ${name}`)
  }
}
console.log(`${busy} busy samples\n-- self`)
show(ownCounts, Number(process.argv[3] ?? 20), () => true)
console.log('-- inclusive (src/, bun:sqlite, Elysia)')
show(inclusive, Number(process.argv[4] ?? 30), (n) => /src\/|bun:sqlite|elysia/.test(n))
