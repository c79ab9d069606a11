// The package works from ESM with named imports, and from CommonJS.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { Client, RedelayError, ErrorCodes } from 'redelay'
import redelay from 'redelay'

test('import { Client } from "redelay" and require("redelay") give the same classes', async () => {
  const require = createRequire(import.meta.url)
  const cjs = require('redelay')
  assert.equal(cjs.Client, Client)
  assert.equal(redelay.Client, Client)
  assert.equal(cjs.RedelayError, RedelayError)
  assert.equal(ErrorCodes.NotFound, 'ERR_REDELAY_NOT_FOUND')
  const c = await Client.connect(process.env.REDIS_URL, { prefix: `node-esm-${process.pid}` })
  const q = c.queue('esm')
  const { id } = await q.publish('from esm')
  const [m] = await q.fetch(1)
  assert.equal(m.id, id)
  await m.ack()
  await c.close()
})
