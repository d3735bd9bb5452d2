import { join } from 'node:path'

/**
 * The project's own cache directory (issue 33): `.cache/` in the checkout (gitignored), where
 * the e2e tests keep what they fetch or build once (the agent CLIs, the container's base file
 * system). Nothing goes to ~/.cache. HARK_TEST_CACHE moves it (scripts/test.ts passes it on).
 */
export const TEST_CACHE = process.env.HARK_TEST_CACHE ?? join(import.meta.dir, '..', '.cache')
