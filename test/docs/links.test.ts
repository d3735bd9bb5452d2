import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { slug } from '../../scripts/api-doc.ts'

/**
 * The project's docs are its own (issue 28, item 2): README.md and docs/ linked to
 * ../shared/..., which does not exist for anyone who clones Hark. Every relative link must
 * stay inside the repository and name a file that is there (and a heading that is there).
 */
const REPO = resolve(import.meta.dir, '..', '..')

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return markdownFiles(path)
    return name.endsWith('.md') ? [path] : []
  })
}
const FILES = [join(REPO, 'README.md'), ...markdownFiles(join(REPO, 'docs'))]

/** Inline links and images, `[text](target)`, outside code blocks and code spans. */
function links(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string)
}

/** The anchors GitHub gives a file's headings (a repeated heading gets -1, -2, ...). */
function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '')
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = slug((m[1] as string).replace(/`/g, ''))
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

describe('links in README.md and docs/', () => {
  test('no link leaves the repository, and none names a file or heading that is not there', () => {
    const broken: string[] = []
    for (const file of FILES) {
      const where = relative(REPO, file)
      for (const target of links(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // https:, mailto:
        const [path = '', anchor] = target.split('#')
        const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
        if (relative(REPO, resolved).startsWith('..')) {
          broken.push(`${where}: ${target} is outside the repository`)
        } else if (!existsSync(resolved)) {
          broken.push(`${where}: ${target} does not exist`)
        } else if (anchor && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) {
          broken.push(`${where}: ${target} names no heading of ${relative(REPO, resolved)}`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  test('no page points into ../shared (the workspace it was written in)', () => {
    for (const file of FILES) {
      expect({
        file: relative(REPO, file),
        shared: readFileSync(file, 'utf8').includes('../shared'),
      }).toEqual({
        file: relative(REPO, file),
        shared: false,
      })
    }
  })

  test('the README points to the API reference in docs/', () => {
    expect(links(readFileSync(join(REPO, 'README.md'), 'utf8'))).toContain('docs/api.md')
  })
})
