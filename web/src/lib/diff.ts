/**
 * A line diff for approval cards (an Edit's `old_string` → `new_string`): the longest common
 * subsequence of lines, after the common head and tail are set aside. The table is quadratic,
 * so past `MAX_CELLS` the middle is shown as all removed then all added (still correct, only
 * less precise) and the caller says so: a phone must not stall on an agent's huge edit.
 */

export type DiffLine = { kind: 'same' | 'del' | 'add'; text: string }

/** A run of unchanged lines folded away, shown as "N unchanged lines". */
export type DiffRow = DiffLine | { kind: 'skip'; count: number }

export interface Diff {
  lines: DiffLine[]
  /** False when the inputs were too big to compare line by line (see above). */
  exact: boolean
}

/** 400 × 500 changed lines; the table is a Uint32Array, so at most 800 KB. */
export const MAX_CELLS = 200_000

/** '' is no lines at all (an insertion into nothing), not one empty line. */
const linesOf = (s: string) => (s === '' ? [] : s.split('\n'))

export function lineDiff(before: string, after: string, maxCells = MAX_CELLS): Diff {
  const a = linesOf(before)
  const b = linesOf(after)
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++
  }
  const same = (text: string): DiffLine => ({ kind: 'same', text })
  const midA = a.slice(head, a.length - tail)
  const midB = b.slice(head, b.length - tail)
  const exact = (midA.length + 1) * (midB.length + 1) <= maxCells
  const middle = exact
    ? lcsDiff(midA, midB)
    : [
        ...midA.map((text): DiffLine => ({ kind: 'del', text })),
        ...midB.map((text): DiffLine => ({ kind: 'add', text })),
      ]
  return {
    lines: [...a.slice(0, head).map(same), ...middle, ...a.slice(a.length - tail).map(same)],
    exact,
  }
}

/** The classic table: `t[i][j]` is the LCS length of `a[i..]` and `b[j..]`. */
function lcsDiff(a: string[], b: string[]): DiffLine[] {
  const n = a.length
  const m = b.length
  const w = m + 1
  const t = new Uint32Array((n + 1) * w)
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      t[i * w + j] =
        a[i] === b[j]
          ? (t[(i + 1) * w + j + 1] as number) + 1
          : Math.max(t[(i + 1) * w + j] as number, t[i * w + j + 1] as number)
    }
  }
  const out: DiffLine[] = []
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i++] as string })
      j++
    } else if ((t[(i + 1) * w + j] as number) >= (t[i * w + j + 1] as number)) {
      // Removals first where either order is as long: a change reads old, then new.
      out.push({ kind: 'del', text: a[i++] as string })
    } else {
      out.push({ kind: 'add', text: b[j++] as string })
    }
  }
  while (i < n) out.push({ kind: 'del', text: a[i++] as string })
  while (j < m) out.push({ kind: 'add', text: b[j++] as string })
  return out
}

/**
 * The rows to show: every change with `context` unchanged lines around it; longer unchanged
 * runs fold into one skip row. A diff of unchanged lines only shows them all.
 */
export function foldContext(lines: DiffLine[], context = 3): DiffRow[] {
  if (lines.every((l) => l.kind === 'same')) return lines
  const rows: DiffRow[] = []
  let run: DiffLine[] = []
  const flush = (atStart: boolean, atEnd: boolean) => {
    const keepBefore = atStart ? 0 : context
    const keepAfter = atEnd ? 0 : context
    if (run.length <= keepBefore + keepAfter + 1) rows.push(...run)
    else {
      rows.push(...run.slice(0, keepBefore))
      rows.push({ kind: 'skip', count: run.length - keepBefore - keepAfter })
      rows.push(...run.slice(run.length - keepAfter))
    }
    run = []
  }
  let seenChange = false
  for (const line of lines) {
    if (line.kind === 'same') {
      run.push(line)
      continue
    }
    if (run.length) flush(!seenChange, false)
    seenChange = true
    rows.push(line)
  }
  if (run.length) flush(false, true)
  return rows
}
