/** Stamped at build time by `scripts/build.ts` (`--define`); the package version otherwise. */
declare const HARK_VERSION: string | undefined

import pkg from '../../package.json' with { type: 'json' }

export const VERSION: string = typeof HARK_VERSION === 'string' ? HARK_VERSION : pkg.version
