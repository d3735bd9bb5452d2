import { beforeAll, describe, expect, test } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import { overflowing } from './fixtures.ts'
import { PHONE, screenshot, webTest } from './harness.ts'

/**
 * Approvals on a phone: the card shows what the tool call will do (a command, a diff, a file,
 * a URL, an MCP tool's arguments), never raw JSON, within the phone's width; Allow, Allow for
 * this session (only when offered) and Deny with a message reach the agent's long-poll as the
 * approval's answer; a closed approval says how it ended. ("Waiting on you": waiting.test.ts.)
 */
const web = webTest({ label: 'Claude Code' })
let page: Page
let errors: string[]

beforeAll(async () => {
  ;({ page, errors } = await web.open({ path: `/c/${web.server.channelId}`, viewport: PHONE }))
  await page.locator('.messages-inner').waitFor()
})

interface Approval {
  tool: string
  input: unknown
  summary?: string
  cwd?: string
  scopes?: ('once' | 'session')[]
  danger?: boolean
}

/** Sends an approval as the agent (as `hark hook claude` does) and waits for its card. */
async function askApproval(
  approval: Approval,
  { title, expires_in }: { title?: string; expires_in?: number } = {},
): Promise<{ id: string; article: Locator }> {
  const { message } = await web.server.agent.send({
    body: { title, blocks: [{ type: 'approval', id: 'approval', ...approval }] },
    expires_in,
  } as never)
  const article = page.locator(`article[data-id="${message.id}"]`)
  await article.locator('.approval').waitFor()
  return { id: message.id, article }
}

/** The agent's long-poll on its approval, started before the person answers. */
const agentWaits = (id: string) => web.server.agent.ask(id, 25).then((r) => r.answer)

/** Brings the card's top into view, for a screenshot of it. */
const showTop = (article: Locator) =>
  article.evaluate((el) => el.scrollIntoView({ block: 'start' }))

describe('approval cards', () => {
  test('a Bash approval shows the command, not JSON, and Allow answers {decision: allow}', async () => {
    const { id, article } = await askApproval(
      {
        tool: 'Bash',
        input: { command: 'npm test -- --runInBand', description: 'Run the test suite' },
        summary: 'npm test -- --runInBand',
        cwd: '/home/dev/shop',
        scopes: ['once'],
      },
      { title: 'Claude Code wants to run a command' },
    )
    expect(await article.locator('.ap-tool').textContent()).toBe('Bash')
    expect(await article.locator('.ap-shell').textContent()).toBe('npm test -- --runInBand')
    expect(await article.locator('.ap-desc').textContent()).toBe('Run the test suite')
    expect(await article.locator('.ap-cwd code').textContent()).toBe('/home/dev/shop')
    expect(await article.textContent()).not.toContain('{"')
    // Offered only once: no session button.
    expect(await article.getByRole('button', { name: 'Allow for this session' }).count()).toBe(0)
    expect(await article.locator('.ap-danger').count()).toBe(0)
    expect(await overflowing(page)).toEqual([])
    await showTop(article)
    await screenshot(page, 'approval-bash-phone')

    // This person logs in by emailed code and has no passkey: answers go unsigned, and the
    // card says what that means before and after (signing: signing.test.ts).
    const note = article.locator('.sign-note')
    await note.waitFor()
    expect(await note.textContent()).toBe(
      'You have no passkey, so your answer is sent unsigned: agents that check signatures will not act on an Allow. Add a passkey in Settings → Passkeys.',
    )
    expect(await note.getByRole('link').getAttribute('href')).toBe('/settings#passkeys')
    await screenshot(page, 'approval-no-passkey-phone')

    const answer = agentWaits(id)
    await article.getByRole('button', { name: 'Allow', exact: true }).click()
    expect(await answer).toEqual({ decision: 'allow' })
    await article.locator('.ap-outcome.allowed', { hasText: 'Allowed · unsigned' }).waitFor()
    expect(await article.locator('.sign-note').textContent()).toStartWith('Sent unsigned:')
    expect(await article.getByRole('button', { name: 'Allow', exact: true }).count()).toBe(0)
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'approval-no-passkey-answered-phone-dark')
    await page.emulateMedia({ colorScheme: 'light' })
  })

  test('an Edit approval is a diff; Deny with a typed message sends the message', async () => {
    const { id, article } = await askApproval(
      {
        tool: 'Edit',
        input: {
          file_path: '/home/dev/shop/src/cart/total.ts',
          old_string:
            'export function total(items: Item[]): number {\n  return items.reduce((s, i) => s + i.price, 0)\n}',
          new_string:
            'export function total(items: Item[]): number {\n  const sum = items.reduce((s, i) => s + i.price * i.quantity, 0)\n  return Math.round(sum * 100) / 100\n}',
        },
        summary: 'Edit /home/dev/shop/src/cart/total.ts',
        scopes: ['once', 'session'],
      },
      { title: 'Claude Code wants to edit a file' },
    )
    expect(await article.locator('.ap-file').textContent()).toBe('/home/dev/shop/src/cart/total.ts')
    expect(await article.locator('del.ap-line .ap-text').allTextContents()).toEqual([
      '  return items.reduce((s, i) => s + i.price, 0)',
    ])
    expect(await article.locator('ins.ap-line .ap-text').allTextContents()).toEqual([
      '  const sum = items.reduce((s, i) => s + i.price * i.quantity, 0)',
      '  return Math.round(sum * 100) / 100',
    ])
    expect(await article.locator('.ap-line.same').count()).toBe(2)
    expect(await article.textContent()).not.toContain('old_string')
    // Offered: the session button is there.
    await article.getByRole('button', { name: 'Allow for this session' }).waitFor()
    expect(await overflowing(page)).toEqual([])
    await showTop(article)
    await screenshot(page, 'approval-edit-phone')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'approval-edit-phone-dark')
    await page.emulateMedia({ colorScheme: 'light' })

    const answer = agentWaits(id)
    await article.getByRole('button', { name: 'Deny' }).click()
    const reason = article.getByLabel('Message to the agent (optional)')
    await reason.waitFor()
    expect(await reason.evaluate((el) => el === document.activeElement)).toBe(true)
    await reason.fill('Keep total() pure; round in the view instead.')
    await screenshot(page, 'approval-deny-phone')
    await article.getByRole('button', { name: 'Deny' }).click()
    expect(await answer).toEqual({
      decision: 'deny',
      message: 'Keep total() pure; round in the view instead.',
    })
    await article
      .locator('.ap-outcome.denied', {
        hasText: 'Denied: Keep total() pure; round in the view instead.',
      })
      .waitFor()
  })

  test('a destructive approval is marked red; Allow for this session answers its scope', async () => {
    const { id, article } = await askApproval(
      {
        tool: 'Bash',
        input: {
          command: 'rm -rf build/ && git push --force origin main',
          description: 'Clean the build and force-push',
        },
        cwd: '/home/dev/shop',
        scopes: ['once', 'session'],
        danger: true,
      },
      { title: 'Claude Code wants to run a command' },
    )
    expect(await article.getAttribute('class')).toContain('danger')
    expect(await article.locator('.ap-danger').textContent()).toContain('Destructive')
    const allow = article.getByRole('button', { name: 'Allow', exact: true })
    expect(await allow.getAttribute('class')).toContain('danger')
    // The accent is the theme's danger colour, not the usual one.
    const [border, danger] = await article.evaluate((el) => [
      getComputedStyle(el).borderLeftColor,
      getComputedStyle(el.querySelector('.ap-danger') as Element).color,
    ])
    expect(border).toBe(danger as string)
    expect(await overflowing(page)).toEqual([])
    await showTop(article)
    await screenshot(page, 'approval-danger-phone')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'approval-danger-phone-dark')
    await page.emulateMedia({ colorScheme: 'light' })

    const answer = agentWaits(id)
    await article.getByRole('button', { name: 'Allow for this session' }).click()
    expect(await answer).toEqual({ decision: 'allow', scope: 'session' })
    await article.locator('.ap-outcome.allowed', { hasText: 'Allowed for this session' }).waitFor()
  })

  test('Write, MultiEdit, WebFetch, an MCP tool and Codex argv read as text, within the width', async () => {
    const longFile = Array.from({ length: 60 }, (_, i) => `line ${i + 1}: ${'x'.repeat(i)}`)
    const cards = [
      await askApproval({
        tool: 'Write',
        input: { file_path: '/home/dev/shop/NOTES.md', content: longFile.join('\n') },
      }),
      await askApproval({
        tool: 'MultiEdit',
        input: {
          file_path: '/home/dev/shop/src/app.ts',
          edits: [
            { old_string: 'const a = 1', new_string: 'const a = 2' },
            { old_string: 'let b', new_string: 'const b', replace_all: true },
          ],
        },
      }),
      await askApproval({
        tool: 'WebFetch',
        input: { url: 'https://example.com/docs/api', prompt: 'Summarise the auth section' },
      }),
      await askApproval({
        tool: 'mcp__github__create_issue',
        input: {
          owner: 'acme',
          repo: 'shop',
          title: 'Cart total ignores quantity',
          labels: ['bug', 'cart'],
          milestone: { id: 7, due: '2026-12-01', owner: { login: 'dana' } },
          body: '<img src=x onerror=alert(1)>\nSteps:\n1. add two items',
        },
      }),
      await askApproval({
        tool: 'shell',
        input: { command: ['bash', '-lc', "npm run build && echo 'done'"], workdir: '/srv' },
      }),
    ]
    const [write, multi, fetch, mcp, codex] = cards.map((c) => c.article) as Locator[]

    // Write: the new content as code, folded until asked.
    const content = write?.locator('.ap-code') as Locator
    expect(await content.textContent()).toContain('line 16:')
    expect(await content.textContent()).not.toContain('line 17:')
    await showTop(write as Locator)
    await screenshot(page, 'approval-write-phone')
    await write?.getByRole('button', { name: 'Show all 60 lines' }).click()
    expect(await content.textContent()).toContain('line 60:')
    expect(await write?.locator('.ap-note').textContent()).toBe('new content · 60 lines')

    // MultiEdit: a hunk per edit, replace_all said in words.
    expect(await multi?.locator('.ap-hunk-head').allTextContents()).toEqual([
      'Edit 1 of 2',
      'Edit 2 of 2 · every occurrence',
    ])
    expect(await multi?.locator('ins.ap-line .ap-text').allTextContents()).toEqual([
      'const a = 2',
      'const b',
    ])

    // WebFetch: the URL (a link) and the prompt.
    expect(await fetch?.locator('.ap-url a').getAttribute('href')).toBe(
      'https://example.com/docs/api',
    )
    expect(await fetch?.locator('.ap-prompt p').textContent()).toBe('Summarise the auth section')

    // An MCP tool: its name readable, its arguments as key/values, nested values pretty-printed;
    // the agent's HTML is text.
    expect(await mcp?.locator('.ap-tool').textContent()).toBe('github: create_issue')
    expect(await mcp?.locator('.ap-fields dt').allTextContents()).toEqual([
      'owner',
      'repo',
      'title',
      'labels',
      'milestone',
      'body',
    ])
    expect(await mcp?.locator('.ap-json-inline').textContent()).toBe('["bug","cart"]')
    expect(await mcp?.locator('.ap-json').textContent()).toBe(
      '{\n  "id": 7,\n  "due": "2026-12-01",\n  "owner": {\n    "login": "dana"\n  }\n}',
    )
    expect(await mcp?.locator('img').count()).toBe(0)
    expect(await mcp?.textContent()).toContain('<img src=x onerror=alert(1)>')

    // Codex's argv: one command line, quoted as a shell would.
    expect(await codex?.locator('.ap-shell').textContent()).toBe(
      `bash -lc "npm run build && echo 'done'"`,
    )
    expect(await codex?.locator('.ap-fields dt').allTextContents()).toEqual(['workdir'])

    for (const c of cards) expect(await c.article.textContent()).not.toContain('{"')
    expect(await overflowing(page)).toEqual([])
    await showTop(mcp as Locator)
    await screenshot(page, 'approval-mcp-phone')
    await showTop(multi as Locator)
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'approval-multiedit-phone-dark')
    await page.emulateMedia({ colorScheme: 'light' })
    for (const c of cards) await web.server.agent.cancel(c.id)
  })

  test('invisible and reordering characters are shown, and the card warns of them', async () => {
    // What runs is `rm -rf ~ #` and then text; an override would show the tail reversed.
    const { id, article } = await askApproval({
      tool: 'Bash',
      input: { command: 'echo hi \u202e; rm -rf ~ #\u202c\u200b', description: 'Say hi' },
    })
    expect(await article.locator('.ap-shell .ap-hidden').allTextContents()).toEqual([
      '⟨U+202E⟩',
      '⟨U+202C⟩',
      '⟨U+200B⟩',
    ])
    expect(await article.locator('.ap-shell').textContent()).toBe(
      'echo hi ⟨U+202E⟩; rm -rf ~ #⟨U+202C⟩⟨U+200B⟩',
    )
    await article.locator('.ap-warning').waitFor()
    const allow = article.getByRole('button', { name: 'Allow', exact: true })
    expect(await allow.getAttribute('class')).toContain('danger')
    await showTop(article)
    await screenshot(page, 'approval-hidden-chars-phone')
    // Deny opens the message field; Escape goes back, focus back on Deny.
    await article.getByRole('button', { name: 'Deny' }).click()
    await article.getByLabel('Message to the agent (optional)').press('Escape')
    const deny = article.getByRole('button', { name: 'Deny' })
    await deny.waitFor()
    expect(await deny.evaluate((el) => el === document.activeElement)).toBe(true)
    const plain = await askApproval({ tool: 'Read', input: {} })
    expect(await plain.article.locator('.ap-warning').count()).toBe(0)
    expect(await plain.article.locator('.ap-desc').textContent()).toBe('No input.')
    await web.server.agent.cancel(id)
    await web.server.agent.cancel(plain.id)
  })

  test('expired says not allowed; withdrawn says why', async () => {
    const expired = await askApproval(
      { tool: 'Bash', input: { command: 'make deploy' } },
      { expires_in: 1 },
    )
    const withdrawn = await askApproval({ tool: 'Bash', input: { command: 'make release' } })
    await web.server.agent.cancel(withdrawn.id, 'answered in the terminal')
    await withdrawn.article
      .locator('.ap-outcome.withdrawn', { hasText: 'Withdrawn: answered in the terminal' })
      .waitFor()
    await expired.article
      .locator('.ap-outcome.expired', { hasText: 'Expired — not allowed' })
      .waitFor({ timeout: 8000 })
    expect(await expired.article.getByRole('button', { name: 'Allow' }).count()).toBe(0)
  })
})

describe('the page', () => {
  test('no console errors or CSP violations along the way', () => {
    expect(errors).toEqual([])
  })
})
