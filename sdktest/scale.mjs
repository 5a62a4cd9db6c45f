// E2B's SDK at scale, as an agent uses it, printing one JSON line per phase:
//
//	run      20 foreground `true` runs through commands.run (median ms)
//	warmed   (with WARM > 0) a smaller crowd first: WARM background
//	         commands started, listed, killed and waited for (ms)
//	started  N background `sleep 600` started (ms for all)
//	listed   commands.list() with the N running (ms, and how many it saw)
//	killed   every one killed through commands.kill, and waited for
//
// After warmed, and between listed and killed, it waits for a line on
// stdin, so a caller can read the daemon's threads and memory at rest and
// while the N commands run:
//
//	E2B_ENVD_RPC_CONNECTIONS=2000 node scale.mjs 1000 [WARM]
//
// The SDK's default connection limit (200) caps background commands at 200
// on any envd: raise it with E2B_ENVD_RPC_CONNECTIONS for more.
import { sandbox } from './helpers.mjs'
import { createInterface } from 'node:readline'

const n = Number(process.argv[2])
const warm = Number(process.argv[3] ?? 0)
if (!Number.isSafeInteger(n) || n <= 0 || !Number.isSafeInteger(warm) || warm < 0) {
  console.error('usage: node scale.mjs N [WARM]')
  process.exit(2)
}
process.env.E2B_DEBUG = 'true'
console.log = () => {}
const sbx = await sandbox()
// SDKTEST_USER runs the commands as that user (the bench uses nobody, whose
// login shell reads no profile of the machine's own users), in /tmp.
const user = process.env.SDKTEST_USER || undefined
const cwd = user ? '/tmp' : undefined
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n')

const runs = []
for (let i = 0; i < 20; i++) {
  const t0 = performance.now()
  const r = await sbx.commands.run('true', { user, cwd })
  if (r.exitCode !== 0) throw new Error(`true exited ${r.exitCode}`)
  runs.push(performance.now() - t0)
}
runs.sort((a, b) => a - b)
say({ phase: 'run', n: runs.length, ms: runs[runs.length >> 1] })

const rl = createInterface({ input: process.stdin })
const lines = rl[Symbol.asyncIterator]()
const nextLine = () => lines.next()

// start starts count background commands and returns their handles.
const start = async (count) => {
  const handles = []
  for (let i = 0; i < count; i++) {
    handles.push(await sbx.commands.run('sleep 600', { background: true, timeoutMs: 0, user, cwd }))
  }
  return handles
}

// killAll kills every one through commands.kill and waits for each.
const killAll = async (handles) => {
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
  return killed
}

let t
if (warm > 0) {
  t = performance.now()
  const w = await start(warm)
  await sbx.commands.list()
  const killed = await killAll(w)
  say({ phase: 'warmed', n: killed, ms: performance.now() - t })
  // The caller reads the daemon's figures at rest now, then sends a line.
  await nextLine()
}

t = performance.now()
const handles = await start(n)
say({ phase: 'started', n, ms: performance.now() - t })

t = performance.now()
const listed = await sbx.commands.list()
const ours = new Set(handles.map((h) => h.pid))
say({ phase: 'listed', n: listed.filter((p) => ours.has(p.pid)).length, ms: performance.now() - t })

// The caller reads the daemon's figures now, then sends a line.
await nextLine()

t = performance.now()
const killed = await killAll(handles)
say({ phase: 'killed', n: killed, ms: performance.now() - t })
rl.close()
process.exit(0)
