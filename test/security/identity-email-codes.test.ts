import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { EMAIL_LIMITS } from '../../src/access/email-limits.ts'
import { CODE_TTL_MS, MAX_OTHER_TRIES } from '../../src/people/enrol/email/codes.ts'
import { type EmailServer, OWNER, otherCode, startEmailServer } from '../email/harness.ts'

/**
 * Attack pass, finding 7: five anonymous requests for a person's address locked them out of email
 * login for 15 minutes from everywhere, and each one voided the code they had just been mailed;
 * five wrong guesses from anywhere burnt it. Now codes asked by others do not void theirs, the
 * per-address limit counts per client address, and a stranger's wrong guesses have tries of
 * their own.
 */

let s: EmailServer
beforeEach(async () => {
  s = await startEmailServer({ trustProxy: true })
})
afterEach(() => s.close())

const PERSON = '203.0.113.5'
const STRANGER = '198.51.100.66'

const start = (ip: string, email = OWNER, purpose = 'login') =>
  s.post('/v1/auth/email/start', { email, purpose }, { 'x-forwarded-for': ip })
const verify = (ip: string, code: string, email = OWNER) =>
  s.post('/v1/auth/email/verify', { email, purpose: 'login', code }, { 'x-forwarded-for': ip })
const codeRows = async (email = OWNER) => await s.ctx.store.emailCodes.byAddress(email, 'login')

/** The codes of the next `n` mails to the person, in the order they were asked for. */
async function nextCodes(n: number, email = OWNER): Promise<string[]> {
  const codes: string[] = []
  for (let i = 0; i < n; i++) codes.push((await s.trap.next(email)).code)
  return codes
}

describe('a stranger cannot deny a person their email login', () => {
  test("a stranger's five requests do not lock the person out, nor void their code", async () => {
    expect((await start(PERSON)).status).toBe(200)
    const [mine] = await nextCodes(1)
    for (let i = 0; i < EMAIL_LIMITS.startsPerAddressFromIp; i++) {
      expect((await start(STRANGER)).status).toBe(200)
    }
    // The stranger is held to their own limit ...
    const limited = await start(STRANGER)
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({
      error:
        'too many codes asked for this email address from your network address; retry in 180 s',
    })
    expect(limited.headers.get('retry-after')).toBe('180')
    expect(await codeRows()).toHaveLength(1 + EMAIL_LIMITS.startsPerAddressFromIp)
    // ... while the person still asks for codes, and the code mailed before still works.
    expect((await start(PERSON)).status).toBe(200)
    await nextCodes(EMAIL_LIMITS.startsPerAddressFromIp + 1)
    const verified = await verify(PERSON, mine!)
    expect(verified.status).toBe(200)
    expect(verified.body.user).toMatchObject({ email: OWNER })
    // The right code consumed every live code for the address.
    expect(await codeRows()).toEqual([])
  })

  test("a stranger's wrong guesses cannot burn the person's code", async () => {
    expect((await start(PERSON)).status).toBe(200)
    const [mine] = await nextCodes(1)
    const answers: string[] = []
    for (let i = 0; i < 20; i++) {
      const ip = `198.51.100.${i % 4}` // several addresses, each under its own try limit
      answers.push(String((await verify(ip, otherCode(mine!))).body.error))
    }
    expect(answers.slice(0, MAX_OTHER_TRIES).every((e) => e.startsWith('code: is wrong'))).toBe(
      true,
    )
    expect(answers[MAX_OTHER_TRIES - 1]).toBe(
      'code: is wrong, and that was the last try; ask for a new one',
    )
    expect(new Set(answers.slice(MAX_OTHER_TRIES))).toEqual(
      new Set(['code: was tried wrong too many times; ask for a new one']),
    )
    // Strangers are now out, even with the right code; the person, who asked for it, is not.
    expect((await verify(STRANGER, mine!)).status).toBe(400)
    expect((await verify(PERSON, mine!)).status).toBe(200)
  })

  test('the person may type their code on another network (the tries of all others)', async () => {
    expect((await start(PERSON)).status).toBe(200)
    const [mine] = await nextCodes(1)
    expect((await verify('192.0.2.44', otherCode(mine!))).body.error).toBe(
      `code: is wrong (${MAX_OTHER_TRIES - 1} tries left)`,
    )
    expect((await verify('192.0.2.44', mine!)).status).toBe(200)
  })

  test('20 codes an hour per address from all sources; past that, same answer, no mail, nothing voided', async () => {
    // Mail-bombing from many addresses, each under its own limits.
    for (let i = 0; i < EMAIL_LIMITS.codesPerAddress; i++) {
      const ip = `198.51.100.${Math.floor(i / EMAIL_LIMITS.startsPerAddressFromIp)}`
      expect((await start(ip)).status).toBe(200)
    }
    const mailed = await nextCodes(EMAIL_LIMITS.codesPerAddress)
    expect(await codeRows()).toHaveLength(EMAIL_LIMITS.codesPerAddress)

    const quiet = await start(PERSON)
    const unknown = await start(PERSON, 'nobody@example.com')
    expect(quiet.status).toBe(200)
    expect(quiet.body).toEqual(unknown.body)
    expect([...quiet.headers]).toEqual([...unknown.headers])
    expect(await codeRows()).toHaveLength(EMAIL_LIMITS.codesPerAddress) // nothing stored
    await Bun.sleep(100)
    expect(s.trap.to(OWNER)).toHaveLength(EMAIL_LIMITS.codesPerAddress) // nothing mailed

    // Every code already mailed is still good; the person uses the last one they got.
    expect((await verify(PERSON, mailed.at(-1)!)).status).toBe(200)

    // One more code every 3 minutes.
    s.clock.advance(3 * 60_000)
    expect((await start(PERSON)).status).toBe(200)
    const [fresh] = await nextCodes(1)
    expect((await verify(PERSON, fresh!)).status).toBe(200)
  })

  test('the per-address limit still holds one client address to 5 codes per 15 minutes', async () => {
    for (let i = 0; i < EMAIL_LIMITS.startsPerAddressFromIp; i++) {
      expect((await start(PERSON)).status).toBe(200)
    }
    expect((await start(PERSON)).status).toBe(429)
    // Another spelling of the address is the same address.
    expect((await start(PERSON, 'Owner@Example.COM')).status).toBe(429)
    expect(await codeRows()).toHaveLength(EMAIL_LIMITS.startsPerAddressFromIp)
  })

  test('expired codes are swept, and a code still lives only 10 minutes', async () => {
    expect((await start(PERSON)).status).toBe(200)
    const [mine] = await nextCodes(1)
    s.clock.advance(CODE_TTL_MS)
    expect((await verify(PERSON, mine!)).body.error).toBe('code: has expired; ask for a new one')
    expect((await start(PERSON, 'x@example.com')).status).toBe(200)
    expect(await codeRows()).toEqual([])
  })
})
