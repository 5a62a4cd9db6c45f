import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { FileType, NotFoundError } from 'e2b'
import { sandbox, scratch, eventually } from './helpers.mjs'

const sbx = await sandbox()

test('write and read text and bytes', async () => {
  const dir = scratch('rw')
  const info = await sbx.files.write(`${dir}/a/b/hello.txt`, 'hello, world\n')
  assert.equal(info.path, `${dir}/a/b/hello.txt`)
  assert.equal(info.name, 'hello.txt')
  assert.equal(await sbx.files.read(`${dir}/a/b/hello.txt`), 'hello, world\n')
  const bytes = new Uint8Array([0, 1, 2, 253, 254, 255])
  await sbx.files.write(`${dir}/bin`, bytes.buffer)
  assert.deepEqual(await sbx.files.read(`${dir}/bin`, { format: 'bytes' }), bytes)
  const many = await sbx.files.write([{ path: `${dir}/m1`, data: 'one' }, { path: `${dir}/m2`, data: 'two' }])
  assert.deepEqual(many.map((f) => f.path).sort(), [`${dir}/m1`, `${dir}/m2`])
  assert.equal(await sbx.files.read(`${dir}/m2`), 'two')
  await assert.rejects(sbx.files.read(`${dir}/missing`), NotFoundError)
  await sbx.files.remove(dir)
})

test('makeDir, exists, getInfo, list with depth', async () => {
  const dir = scratch('list')
  assert.equal(await sbx.files.makeDir(`${dir}/x/y`), true)
  assert.equal(await sbx.files.makeDir(`${dir}/x/y`), false)
  await sbx.files.write(`${dir}/x/y/deep.txt`, 'deep')
  await sbx.files.write(`${dir}/top.txt`, '12345')
  assert.equal(await sbx.files.exists(`${dir}/top.txt`), true)
  assert.equal(await sbx.files.exists(`${dir}/nope`), false)

  const info = await sbx.files.getInfo(`${dir}/top.txt`)
  assert.equal(info.type, FileType.FILE)
  assert.equal(info.size, 5)
  assert.equal(info.name, 'top.txt')
  assert.equal(info.path, `${dir}/top.txt`)
  assert.match(info.permissions, /^-rw/)
  assert.ok(info.owner && info.group)
  assert.ok(info.modifiedTime instanceof Date && !isNaN(info.modifiedTime))
  assert.equal((await sbx.files.getInfo(`${dir}/x`)).type, FileType.DIR)

  const one = (await sbx.files.list(dir)).map((e) => e.path).sort()
  assert.deepEqual(one, [`${dir}/top.txt`, `${dir}/x`])
  const three = (await sbx.files.list(dir, { depth: 3 })).map((e) => e.path).sort()
  assert.deepEqual(three, [`${dir}/top.txt`, `${dir}/x`, `${dir}/x/y`, `${dir}/x/y/deep.txt`])
  await sbx.files.remove(dir)
})

test('symlink entries', async () => {
  const dir = scratch('link')
  await sbx.files.write(`${dir}/target.txt`, 'x')
  await sbx.commands.run(`ln -s target.txt ${dir}/link`)
  const info = await sbx.files.getInfo(`${dir}/link`)
  assert.equal(info.type, FileType.FILE)
  assert.equal(info.symlinkTarget, `${dir}/target.txt`)
  await sbx.files.remove(dir)
})

test('rename and remove', async () => {
  const dir = scratch('mv')
  await sbx.files.write(`${dir}/old.txt`, 'moving')
  const moved = await sbx.files.rename(`${dir}/old.txt`, `${dir}/sub/new.txt`)
  assert.equal(moved.path, `${dir}/sub/new.txt`)
  assert.equal(await sbx.files.exists(`${dir}/old.txt`), false)
  assert.equal(await sbx.files.read(`${dir}/sub/new.txt`), 'moving')
  await assert.rejects(sbx.files.rename(`${dir}/gone`, `${dir}/x`), NotFoundError)
  await sbx.files.remove(`${dir}/sub`)
  assert.equal(await sbx.files.exists(`${dir}/sub`), false)
  await sbx.files.remove(dir)
})

test('watchDir events', async () => {
  const dir = scratch('watch')
  await sbx.files.makeDir(dir)
  const events = []
  const w = await sbx.files.watchDir(dir, (e) => { events.push(e) }, { timeoutMs: 0 })
  try {
    await sbx.files.write(`${dir}/new.txt`, 'a')
    await sbx.files.rename(`${dir}/new.txt`, `${dir}/renamed.txt`)
    await sbx.files.remove(`${dir}/renamed.txt`)
    const has = (name, type) => events.some((e) => e.name === name && e.type === type)
    await eventually('create, write, rename and remove events', async () =>
      has('new.txt', 'create') && has('new.txt', 'write') && has('new.txt', 'rename') && has('renamed.txt', 'remove'))
  } finally {
    await w.stop()
  }
  await sbx.files.remove(dir)
})

test('upload and download 100 MiB', async () => {
  const dir = scratch('big')
  const data = randomBytes(100 << 20)
  const want = createHash('sha256').update(data).digest('hex')
  await sbx.files.write(`${dir}/big.bin`, data.buffer.slice(data.byteOffset, data.byteOffset + data.length), { requestTimeoutMs: 300000 })
  assert.equal((await sbx.files.getInfo(`${dir}/big.bin`)).size, data.length)
  const stream = await sbx.files.read(`${dir}/big.bin`, { format: 'stream', requestTimeoutMs: 300000 })
  const h = createHash('sha256')
  let n = 0
  for await (const chunk of stream) { h.update(chunk); n += chunk.length }
  assert.equal(n, data.length)
  assert.equal(h.digest('hex'), want)
  await sbx.files.remove(dir)
})
