/**
 * A message's time, as `stamp` and `fullDate` in format.ts write it, from formatters made once:
 * each of those calls builds an Intl formatter, the largest script cost of mounting messages
 * while scrolling a long thread (11% of it, bench/web-speed.ts --profile). format.ts is shared
 * beyond the thread; these could become its own.
 */
const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })
const dated = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
})
/** What `Date.prototype.toLocaleString()` shows without options. */
const full = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
})

/** The clock today, else the date too; and the whole date and time, for a tooltip. */
export function messageTime(ms: number): { short: string; full: string } {
  const d = new Date(ms)
  const today = new Date().toDateString() === d.toDateString()
  return { short: (today ? clock : dated).format(d), full: full.format(d) }
}
