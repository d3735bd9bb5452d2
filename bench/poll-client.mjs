/**
 * A load generator for held long-polls, run by Node (not Bun): Node's sockets can pick their
 * source address (`localAddress`), Bun's fetch and Bun.connect cannot, and one source address
 * to one server port has only ~28,000 ephemeral ports. Spreading the polls over 127.0.0.x
 * addresses gives each address its own ports. bench/longpolls.ts runs several of these, each
 * holding its share, and reads their reports from stdout.
 *
 *   node bench/poll-client.mjs '{"host":"127.0.0.1","port":8080,"path":"/v1/messages?...",
 *     "authorization":"Bearer ...","count":12500,"rate":500,"addresses":["127.0.0.2","127.0.0.3"],"marker":"WAKE"}'
 *
 * Prints `parked N` once every request is written, then one line per poll as it ends:
 * `a INDEX STATUS AT KIND OPENED` (AT, OPENED: epoch milliseconds, fractional, of the answer and
 * of the connection; KIND: e = no messages, w = holds
 * the marker, o = anything else) or `x INDEX AT OPENED` (closed or failed without an answer); exits when
 * every poll has ended. `cpu MS` (its own CPU time so far) comes before `parked` and last. Plain JavaScript on purpose: Node 20 runs no TypeScript.
 */
import { connect } from 'node:net'

const cfg = JSON.parse(process.argv[2])
const request = `GET ${cfg.path} HTTP/1.1\r\nHost: ${cfg.host}:${cfg.port}\r\nAuthorization: ${cfg.authorization}\r\n\r\n`
const cpu = () => {
  const { user, system } = process.cpuUsage()
  return ((user + system) / 1000).toFixed(1)
}
const now = () => (performance.timeOrigin + performance.now()).toFixed(2)
let out = []
const report = (line) => {
  out.push(line)
  if (out.length >= 256) flush()
}
const flush = () => {
  if (out.length === 0) return
  process.stdout.write(`${out.join('\n')}\n`)
  out = []
}
setInterval(flush, 50).unref()

let ended = 0
const end = () => {
  ended++
  if (ended === cfg.count) {
    report(`cpu ${cpu()}`)
    flush()
    process.exit(0)
  }
}

/** Opens poll `i`; resolves once its request is written (or it failed). */
function open(i) {
  return new Promise((resolve) => {
    let data = ''
    let done = false
    let opened = ''
    const finish = (line) => {
      if (done) return
      done = true
      report(line)
      end()
    }
    const socket = connect({
      host: cfg.host,
      port: cfg.port,
      localAddress: cfg.addresses[i % cfg.addresses.length],
    })
    socket.setEncoding('latin1')
    socket.on('connect', () => {
      opened = now()
      socket.write(request)
      resolve()
    })
    socket.on('data', (chunk) => {
      data += chunk
      const head = data.indexOf('\r\n\r\n')
      if (head === -1) return
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(data.slice(0, head))
      const body = data.slice(head + 4)
      const complete = length ? body.length >= Number(length[1]) : body.endsWith('0\r\n\r\n') // chunked: the last chunk
      if (!complete) return
      const status = data.slice(9, 12)
      const kind = body.includes('"messages":[]') ? 'e' : body.includes(cfg.marker) ? 'w' : 'o'
      finish(`a ${i} ${status} ${now()} ${kind} ${opened}`)
      socket.destroy()
    })
    socket.on('error', () => {
      finish(`x ${i} ${now()} ${opened || now()}`)
      resolve()
    })
    socket.on('close', () => {
      finish(`x ${i} ${now()} ${opened || now()}`)
      resolve()
    })
  })
}

// Paced at `rate` connections a second, 50 at a time: a connection the kernel has completed
// waits in the server's accept queue (512 for Bun) until the server takes it, and one past a
// full queue is dropped and later reset (bench/longpolls.ts prints the kernel's overflow count).
const BATCH = 50
const started = performance.now()
for (let i = 0; i < cfg.count; i += BATCH) {
  const batch = []
  for (let j = i; j < Math.min(cfg.count, i + BATCH); j++) batch.push(open(j))
  await Promise.all(batch)
  const due = ((i + BATCH) / cfg.rate) * 1000 - (performance.now() - started)
  if (due > 0) await new Promise((r) => setTimeout(r, due))
}
report(`cpu ${cpu()}`)
report(`parked ${cfg.count}`)
flush()
