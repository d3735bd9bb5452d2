import { expect, test } from 'bun:test'
import { DESKTOP, webTest } from './harness.ts'

/** The person writes to the agent with text and attachments; the agent gets them as blocks. */
const web = webTest()

// A 1×1 transparent PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
)

test('text with a file and an image: uploaded, sent as blocks, shown, downloadable', async () => {
  const { context, page, errors } = await web.open({
    viewport: DESKTOP,
    path: `/c/${web.server.channelId}`,
  })
  await page.getByRole('textbox', { name: /message/i }).fill('Here are the logs')
  const chooser = page.waitForEvent('filechooser')
  await page.getByRole('button', { name: 'Attach files' }).click()
  await (await chooser).setFiles([
    { name: 'build.log', mimeType: 'text/plain', buffer: Buffer.from('line 1\nline 2\n') },
    { name: 'pixel.png', mimeType: 'image/png', buffer: PNG },
  ])
  expect(await page.getByRole('list', { name: 'Attachments' }).textContent()).toContain('build.log')
  await page.getByRole('button', { name: /^send$/i }).click()

  // The agent reads one message from the person with the text and both files as blocks.
  let sent: Awaited<ReturnType<typeof web.server.agent.feed>>['messages'][number] | undefined
  for (let i = 0; i < 50 && !sent; i++) {
    const { messages } = await web.server.agent.feed({ since: 0, sender: 'human', peek: true })
    sent = messages[0]
    if (!sent) await Bun.sleep(100)
  }
  const body = sent && 'body' in sent ? sent.body : undefined
  expect(body?.text).toBe('Here are the logs')
  const blocks = body?.blocks ?? []
  expect(blocks.map((b) => b.type)).toEqual(['file', 'image'])
  const fileBlock = blocks[0] as unknown as { file_id: string; name: string; size: number }
  expect(fileBlock).toMatchObject({ name: 'build.log', size: 14 })
  const download = await web.server.agent.download(fileBlock.file_id)
  expect(await download.text()).toBe('line 1\nline 2\n')

  // The thread shows the message with its file (name and size) and the image.
  const mine = page.locator(`article[data-id="${sent?.id}"]`)
  await mine.waitFor({ timeout: 5000 })
  expect(await mine.textContent()).toContain('build.log')
  await mine.locator('img').first().waitFor({ timeout: 5000 })
  expect(
    await mine
      .locator('img')
      .first()
      .evaluate((img) => (img as HTMLImageElement).naturalWidth),
  ).toBe(1)
  // The attachment list is cleared for the next message.
  expect(await page.getByRole('list', { name: 'Attachments' }).count()).toBe(0)
  expect(errors).toEqual([])
  await context.close()
})
