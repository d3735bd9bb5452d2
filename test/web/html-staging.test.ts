import { beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { embedThread } from './embed-thread.ts'
import { webTest } from './harness.ts'

/**
 * An html question's reply() only stages a value, which the app shows outside the frame; only
 * the app's Send button sends it, once (see html-sandbox.test.ts for what the frame cannot do).
 */
const web = webTest({ label: 'Embed bot' })
const thread = embedThread(web)
const { probes, probed, rendered, article, clickInEmbed, sendButton, stagedText, postsFor } = thread
let page: Page

beforeAll(async () => {
  ;({ page } = await thread.open())
})

describe('the html sandbox', () => {
  describe('an html question is answered only by the Send button of the app', () => {
    test('a reply() on load and a click the embed fakes only stage the value; Send sends it', async () => {
      const { message } = await web.server.agent.send({
        body: {
          title: 'Deploy?',
          blocks: [
            {
              type: 'html',
              id: 'consent',
              question: true,
              html: `<button id="yes" onclick="reply({ approve: true })">Approve</button><script>
                reply({ approve: true })
                setTimeout(() => {
                  document.getElementById('yes').click()
                  document.getElementById('yes').dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }))
                  setTimeout(() => parent.postMessage({ probe: 'idle-done' }, '*'), 1000)
                }, 300)
              </script>`,
            },
          ],
        },
      })
      const id = message.id
      await article(id).locator('.q-staged-value').waitFor()
      expect(await stagedText(id)).toBe('{ "approve": true }')
      // The embed had its time (its load, its own click, a second after it): still open.
      await probed('idle-done')
      await sendButton(id).waitFor()
      expect((await web.server.agent.ask(id)).message.ask?.status).toBe('open')
      expect(postsFor(id)).toBe(0)
      await sendButton(id).click()
      await article(id).locator('.q-outcome.answered').waitFor()
      const ask = (await web.server.agent.ask(id)).message.ask
      expect(ask?.status).toBe('answered')
      expect(ask?.answer).toEqual({ approve: true })
      expect(postsFor(id)).toBe(1)
    })

    test('a later reply() replaces the staged value; once sent, replies do nothing', async () => {
      const { message } = await web.server.agent.send({
        body: {
          title: 'Which one?',
          blocks: [
            {
              type: 'html',
              id: 'which',
              question: true,
              html: `<button id="a" onclick="reply('alpha'); parent.postMessage({ probe: 'a-' + Date.now() }, '*')">A</button>
                <button id="b" onclick="reply('beta')">B</button>
                <button id="c" onclick="reply('gamma'); parent.postMessage({ probe: 'gamma' }, '*')">C</button>`,
            },
          ],
        },
      })
      const id = message.id
      const frame = page.frameLocator(`article[data-id="${id}"] iframe`)
      await article(id).locator('.q-staged-hint').waitFor()
      await clickInEmbed(id, '#a')
      await page.waitForFunction(
        (mid) =>
          document.querySelector(`article[data-id="${mid}"] .q-staged-value`)?.textContent ===
          '"alpha"',
        id,
      )
      await frame.locator('#b').click()
      await page.waitForFunction(
        (mid) =>
          document.querySelector(`article[data-id="${mid}"] .q-staged-value`)?.textContent ===
          '"beta"',
        id,
      )
      // Send by keyboard, and hold the request: a reply while it is under way changes nothing.
      let release = () => {}
      const held = new Promise<void>((r) => {
        release = r
      })
      let reached = () => {}
      const intercepted = new Promise<void>((r) => {
        reached = r
      })
      const answerUrl = `${web.server.url}/v1/app/messages/${id}/answer`
      await page.route(answerUrl, async (route) => {
        reached()
        await held
        await route.continue()
      })
      await sendButton(id).focus()
      await page.keyboard.press('Enter')
      await intercepted
      await frame.locator('#c').click()
      await probed('gamma')
      await rendered()
      expect(await stagedText(id)).toBe('"beta"')
      release()
      await article(id).locator('.q-outcome.answered').waitFor()
      await page.unroute(answerUrl)
      expect((await web.server.agent.ask(id)).message.ask?.answer).toBe('beta')
      // The answered question's embed is still shown; its replies go nowhere.
      const before = (await probes()).length
      await frame.locator('#a').click()
      await page.waitForFunction(
        (n) => (window as unknown as { probes: unknown[] }).probes.length > n,
        before,
      )
      await rendered()
      expect(await article(id).locator('.q-staged, .q-staged-send').count()).toBe(0)
      expect((await web.server.agent.ask(id)).message.ask?.answer).toBe('beta')
      expect(postsFor(id)).toBe(1)
    })

    test('among several inputs, the staged value goes with the form and its Send', async () => {
      const { message } = await web.server.agent.send({
        body: {
          title: 'Two things',
          blocks: [
            { type: 'text_input', id: 'note', label: 'Note' },
            {
              type: 'html',
              id: 'pick',
              question: true,
              html: '<script>reply(1); reply(2)</script>',
            },
          ],
        },
      })
      const id = message.id
      await page.waitForFunction(
        (mid) =>
          document.querySelector(`article[data-id="${mid}"] .q-staged-value`)?.textContent === '2',
        id,
      )
      expect(await article(id).locator('.q-staged-send').count()).toBe(0)
      await article(id).getByLabel('Note').fill('ok')
      await article(id).locator('.q-actions button:enabled').click()
      await article(id).locator('.q-outcome.answered').waitFor()
      expect((await web.server.agent.ask(id)).message.ask?.answer).toEqual({ note: 'ok', pick: 2 })
      expect(postsFor(id)).toBe(1)
    })

    test('the staged value is shown as escaped text, cut when long', async () => {
      const long = `<b id="bold">x</b>\u202e${'y'.repeat(400)}`
      const { message } = await web.server.agent.send({
        body: {
          title: 'Long',
          blocks: [
            {
              type: 'html',
              id: 'long',
              question: true,
              html: `<script>reply(${JSON.stringify(long)})</script>`,
            },
          ],
        },
      })
      const id = message.id
      await article(id).locator('.q-staged-value').waitFor()
      const text = (await stagedText(id)) ?? ''
      expect(text.startsWith('"<b id=\\"bold\\">x</b>\\u202e')).toBe(true)
      expect(text.endsWith('…')).toBe(true)
      expect(text.length).toBe(241)
      expect(await article(id).locator('#bold').count()).toBe(0)
      expect(await article(id).locator('.q-staged-line').textContent()).toContain(
        `(${JSON.stringify(long).length + 5} characters)`,
      )
      await article(id).getByRole('button', { name: 'Show all' }).click()
      await article(id).locator('.q-staged-value.all').waitFor()
      expect((await stagedText(id))?.endsWith('yyy"')).toBe(true)
      expect((await web.server.agent.ask(id)).message.ask?.status).toBe('open')
    })
  })
})
