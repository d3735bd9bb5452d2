import type { Page } from 'playwright-core'
import { iconPng } from '../../scripts/web-icons.ts'
import type { AgentClient } from '../../src/agent/client.ts'

/** A message with every display block the spec knows, plus one the app does not know. */
export async function sendEveryBlock(agent: AgentClient) {
  const image = await agent.upload('chart.png', iconPng(96, false), 'image/png')
  const file = await agent.upload('report.csv', 'suite,passed\napi,120\n', 'text/csv')
  const { message } = await agent.send({
    body: {
      title: 'Nightly build #512',
      text: 'All green except one flaky test.',
      blocks: [
        { type: 'heading', text: 'Summary' },
        {
          type: 'markdown',
          text: '**Bold**, _italic_, `code` and a [link](https://example.com/docs):\n\n- one\n- two\n\n> a quote',
        },
        { type: 'code', language: 'typescript', code: 'const answer = 42\nconsole.log(answer)' },
        { type: 'link', url: 'https://ci.example.com/builds/512', label: 'Open the build' },
        { type: 'progress', value: 7, max: 10, label: 'Tests run' },
        { type: 'progress', value: 40, label: 'Coverage' },
        {
          type: 'keyvalue',
          items: [
            { key: 'Branch', value: 'main' },
            { key: 'Commit', value: 'a1b2c3d' },
            { key: 'Duration', value: '4m 12s' },
          ],
        },
        {
          type: 'table',
          columns: ['Suite', 'Passed', 'Failed'],
          rows: [
            ['api', 120, 0],
            ['web', 33, 1],
            ['cli', 41, 0],
          ],
        },
        { type: 'image', file_id: image.file_id, name: 'chart.png', alt: 'Build chart' },
        {
          type: 'file',
          file_id: file.file_id,
          name: 'report.csv',
          mime: 'text/csv',
          size: file.size,
        },
        {
          type: 'html',
          label: 'Custom view',
          html: '<!doctype html><style>body{font:14px sans-serif;margin:8px}</style><b id="hello">Hello from the embed</b><p>Rendered in a sandbox.</p>',
        },
        { type: 'sparkline', values: [1, 2, 3] },
      ],
    },
  })
  return { message, image, file }
}

/** Elements wider than their box (sideways scrolling), and the page itself: none wanted. */
export async function overflowing(p: Page): Promise<string[]> {
  return p.evaluate(() => {
    const wide: string[] = []
    const root = document.documentElement
    if (root.scrollWidth > root.clientWidth) wide.push('page')
    // The page never scrolls as a whole: its lists do, under a header that stays.
    if (root.scrollHeight > root.clientHeight) wide.push('page (vertically)')
    for (const el of document.querySelectorAll('.messages, .msg, .approval, .ap-code, .ap-diff')) {
      if (el.scrollWidth > el.clientWidth + 1) wide.push(el.className)
    }
    return wide
  })
}
