/**
 * Counters, gauges and histograms in the Prometheus text format (version 0.0.4), made for the
 * handful of families `/metrics` shows (src/server/metrics.ts). Written here rather than taken
 * from a client library: the whole format is a few lines, and the binary stays small.
 */
export type Labels = Record<string, string>

const escapeLabel = (value: string) =>
  value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')

const escapeHelp = (text: string) => text.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')

/** `{a="1",b="2"}`, or nothing for no labels; keys in the order given. */
function labelText(labels: Labels | undefined, extra?: [string, string]): string {
  const parts = Object.entries(labels ?? {}).map(([k, v]) => `${k}="${escapeLabel(v)}"`)
  if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`)
  return parts.length > 0 ? `{${parts.join(',')}}` : ''
}

/** A number as Prometheus writes it (`+Inf`, integers without a fraction). */
const num = (n: number) =>
  n === Number.POSITIVE_INFINITY ? '+Inf' : n === Number.NEGATIVE_INFINITY ? '-Inf' : String(n)

interface Family {
  render(): string
}

abstract class Series<T> implements Family {
  protected readonly series = new Map<string, { labels: Labels | undefined; value: T }>()
  /** Each labels object's series key, for callers that reuse their labels objects. */
  private readonly keys = new WeakMap<Labels, string>()
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' | 'histogram',
  ) {}

  protected slot(labels: Labels | undefined, fresh: () => T): T {
    let key = labels ? this.keys.get(labels) : ''
    if (key === undefined) {
      key = labelText(labels)
      this.keys.set(labels as Labels, key)
    }
    let entry = this.series.get(key)
    if (!entry) {
      entry = { labels, value: fresh() }
      this.series.set(key, entry)
    }
    return entry.value
  }

  protected head(): string {
    return `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n`
  }

  abstract render(): string
}

export class Counter extends Series<{ n: number }> {
  constructor(name: string, help: string) {
    super(name, help, 'counter')
  }

  inc(labels?: Labels, by = 1): void {
    this.slot(labels, () => ({ n: 0 })).n += by
  }

  render(): string {
    let out = this.head()
    for (const { labels, value } of this.series.values()) {
      out += `${this.name}${labelText(labels)} ${num(value.n)}\n`
    }
    return out
  }
}

/**
 * A value read when scraped (held long-polls, the database's size): nothing to keep up to date
 * on the hot paths. `read` answers one value, or several by their labels.
 */
export class Gauge implements Family {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number | [Labels, number][],
    private readonly type: 'gauge' | 'counter' = 'gauge',
  ) {}

  render(): string {
    const value = this.read()
    let out = `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n`
    const rows: [Labels | undefined, number][] =
      typeof value === 'number' ? [[undefined, value]] : value
    for (const [labels, n] of rows) out += `${this.name}${labelText(labels)} ${num(n)}\n`
    return out
  }
}

export class Histogram extends Series<{ counts: number[]; sum: number; count: number }> {
  constructor(
    name: string,
    help: string,
    /** Upper bounds, ascending; `+Inf` is added. */
    private readonly buckets: readonly number[],
  ) {
    super(name, help, 'histogram')
  }

  observe(labels: Labels | undefined, value: number): void {
    const s = this.slot(labels, () => ({ counts: this.buckets.map(() => 0), sum: 0, count: 0 }))
    // Each observation lands in its own bucket; render() makes them cumulative.
    const i = this.buckets.findIndex((le) => value <= le)
    if (i !== -1) s.counts[i] = (s.counts[i] ?? 0) + 1
    s.sum += value
    s.count++
  }

  render(): string {
    let out = this.head()
    for (const { labels, value } of this.series.values()) {
      let running = 0
      this.buckets.forEach((le, i) => {
        running += value.counts[i] ?? 0
        out += `${this.name}_bucket${labelText(labels, ['le', num(le)])} ${running}\n`
      })
      out += `${this.name}_bucket${labelText(labels, ['le', '+Inf'])} ${value.count}\n`
      out += `${this.name}_sum${labelText(labels)} ${num(value.sum)}\n`
      out += `${this.name}_count${labelText(labels)} ${value.count}\n`
    }
    return out
  }
}

/** The families of one server, rendered in the order they were added. */
export class Registry {
  private readonly families: Family[] = []

  add<F extends Family>(family: F): F {
    this.families.push(family)
    return family
  }

  render(): string {
    return this.families.map((f) => f.render()).join('')
  }
}
