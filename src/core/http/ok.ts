/** The answer of a route that only says it is done. */
export const OK = { ok: true } as const

/** Runs `act` (awaited when async) and answers `{ ok: true }`: for removals, revocations, tests sent. */
export async function done(act: () => unknown): Promise<typeof OK> {
  await act()
  return OK
}
