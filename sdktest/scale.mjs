// Starts N background commands through E2B's SDK, as an agent does, then
// kills them all, and prints how long each half took as JSON. Between the
// halves it waits for a line on stdin, so a caller can read the daemon's
// threads and memory while the N commands run:
//
//	node scale.mjs 1000
import { sandbox } from './helpers.mjs'
import { createInterface } from 'node:readline'

const n = Number(process.argv[2])
if (!Number.isSafeInteger(n) || n <= 0) {
  console.error('usage: node scale.mjs N')
  process.exit(2)
}
process.env.E2B_DEBUG = 'true'
console.log = () => {}
const sbx = await sandbox()
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n')

let t = performance.now()
const handles = []
for (let i = 0; i < n; i++) {
  handles.push(await sbx.commands.run('sleep 600', { background: true, timeoutMs: 0 }))
}
say({ phase: 'started', n, ms: performance.now() - t })

// The caller reads the daemon's figures now, then sends a line.
const rl = createInterface({ input: process.stdin })
await new Promise((r) => rl.once('line', r))

t = performance.now()
let killed = 0
for (const h of handles) {
  if (await sbx.commands.kill(h.pid)) killed++
}
for (const h of handles) {
  try {
    await h.wait()
  } catch {
    // a killed command's wait rejects with its exit
  }
}
say({ phase: 'killed', n: killed, ms: performance.now() - t })
rl.close()
process.exit(0)
