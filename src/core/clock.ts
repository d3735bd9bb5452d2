/** Time is a dependency so tests can reason about expiry without sleeping for real minutes. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }
