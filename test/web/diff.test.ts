import { describe, expect, test } from 'bun:test'
import { type DiffLine, foldContext, lineDiff } from '../../web/src/lib/diff.ts'

/** The approval card's line diff (web/src/lib/diff.ts): exact when small, bounded when not. */

const render = (lines: DiffLine[]) =>
  lines.map((l) => `${{ same: ' ', del: '-', add: '+' }[l.kind]}${l.text}`)

describe('line diff', () => {
  test('a changed line between unchanged ones', () => {
    const d = lineDiff('a\nb\nc', 'a\nB\nc')
    expect(d.exact).toBe(true)
    expect(render(d.lines)).toEqual([' a', '-b', '+B', ' c'])
  })

  test('insertions and removals find the longest common lines', () => {
    const d = lineDiff('one\ntwo\nthree\nfour', 'zero\none\nthree\nfour\nfive')
    expect(render(d.lines)).toEqual(['+zero', ' one', '-two', ' three', ' four', '+five'])
  })

  test('an empty side is no lines: all added, or all removed', () => {
    expect(render(lineDiff('', 'x\ny').lines)).toEqual(['+x', '+y'])
    expect(render(lineDiff('x', '').lines)).toEqual(['-x'])
    expect(lineDiff('', '').lines).toEqual([])
  })

  test('the same text is all unchanged', () => {
    expect(render(lineDiff('a\nb', 'a\nb').lines)).toEqual([' a', ' b'])
  })

  test('too big to compare: the changed middle as old then new, the common ends kept', () => {
    const before = ['head', ...Array.from({ length: 30 }, (_, i) => `old ${i}`), 'tail']
    const after = ['head', ...Array.from({ length: 30 }, (_, i) => `new ${i}`), 'tail']
    const d = lineDiff(before.join('\n'), after.join('\n'), 100)
    expect(d.exact).toBe(false)
    const lines = render(d.lines)
    expect(lines[0]).toBe(' head')
    expect(lines.at(-1)).toBe(' tail')
    expect(lines.slice(1, 31).every((l) => l.startsWith('-old'))).toBe(true)
    expect(lines.slice(31, 61).every((l) => l.startsWith('+new'))).toBe(true)
  })

  test('a huge edit stays quick', () => {
    const big = Array.from({ length: 20_000 }, (_, i) => `line ${i}`)
    const started = performance.now()
    const d = lineDiff(big.join('\n'), big.map((l, i) => (i % 2 ? l : `${l}!`)).join('\n'))
    expect(d.exact).toBe(false)
    expect(d.lines.length).toBe(40_000 - 1)
    expect(performance.now() - started).toBeLessThan(2000)
  })
})

describe('context folding', () => {
  test('long unchanged runs fold to three lines each side of a change', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`)
    const after = before.map((l) => (l === 'l10' ? 'L10' : l))
    const rows = foldContext(lineDiff(before.join('\n'), after.join('\n')).lines)
    expect(rows).toEqual([
      { kind: 'skip', count: 7 },
      { kind: 'same', text: 'l7' },
      { kind: 'same', text: 'l8' },
      { kind: 'same', text: 'l9' },
      { kind: 'del', text: 'l10' },
      { kind: 'add', text: 'L10' },
      { kind: 'same', text: 'l11' },
      { kind: 'same', text: 'l12' },
      { kind: 'same', text: 'l13' },
      { kind: 'skip', count: 6 },
    ])
  })

  test('short runs are kept whole; an unchanged diff is shown whole', () => {
    const rows = foldContext(lineDiff('a\nb\nc', 'a\nB\nc').lines)
    expect(rows.map((r) => r.kind)).toEqual(['same', 'del', 'add', 'same'])
    expect(foldContext(lineDiff('a\nb', 'a\nb').lines)).toHaveLength(2)
  })
})
