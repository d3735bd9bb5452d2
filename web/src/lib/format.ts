/** Small formatting helpers for times and sizes, in the person's own locale. */

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })

/** "5 min ago", "in 2 hours", "yesterday". */
export function fromNow(ms: number, now = Date.now()): string {
  const s = Math.round((ms - now) / 1000)
  const abs = Math.abs(s)
  if (abs < 45) return s <= 0 ? 'just now' : 'in a moment'
  if (abs < 3600) return relative.format(Math.round(s / 60), 'minute')
  if (abs < 86400) return relative.format(Math.round(s / 3600), 'hour')
  return relative.format(Math.round(s / 86400), 'day')
}

/** A message's time: the clock today, else the date too. */
export function stamp(ms: number): string {
  const d = new Date(ms)
  const today = new Date().toDateString() === d.toDateString()
  return today
    ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleString(undefined, {
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
      })
}

export const fullDate = (ms: number) => new Date(ms).toLocaleString()
