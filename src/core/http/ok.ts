/** The answer of a route that only says it is done. */
export const OK = { ok: true } as const

/** Runs `act` and answers `{ ok: true }`: for removals, revocations, tests sent. */
export function done(act: () => unknown): typeof OK {
  act()
  return OK
}
