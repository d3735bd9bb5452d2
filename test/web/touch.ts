import type { BrowserContext } from 'playwright-core'
import { cookieName } from '../../src/access/sessions/service.ts'
import type { WebTest } from './harness.ts'

/**
 * A context logged in as the owner, as `web.context()` makes, but with touch when asked: a
 * phone is a narrow screen that is tapped. Closed by the caller.
 */
export async function touchContext(
  web: WebTest,
  viewport: { width: number; height: number; touch: boolean },
): Promise<BrowserContext> {
  const context = await web.browser.newContext({
    viewport: { width: viewport.width, height: viewport.height },
    hasTouch: viewport.touch,
    serviceWorkers: 'block',
  })
  const { cookie } = await web.server.session(undefined, 'playwright')
  await context.addCookies([
    {
      name: cookieName(web.server.ctx),
      value: cookie.split('=').slice(1).join('='),
      url: web.server.url,
      httpOnly: true,
      sameSite: 'Strict',
    },
  ])
  return context
}
