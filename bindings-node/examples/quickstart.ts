// The README's quick start: publish a delayed message and receive it. Run it with
//   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/quickstart.ts   (or compile with tsc)
import { Client, Message } from 'redelay'

async function main(): Promise<void> {
  const client = await Client.connect(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const orders = client.queue('orders')

  // Due in 2 seconds; a Date works too: { at: new Date(Date.now() + 2000) }
  const { id } = await orders.publish(JSON.stringify({ order: 42, action: 'close-if-unpaid' }), {
    delayMs: 2000,
    headers: { 'content-type': 'application/json' },
  })
  console.log(`published ${id}`)

  const sub = await orders.subscribe(
    async (msg: Message) => {
      const job = msg.json<{ order: number; action: string }>()
      console.log(`${msg.id}: order ${job.order} (${job.action}), ${msg.latenessMs.toFixed(1)} ms late`)
      // returning acks the message; throwing nacks it, and it is retried with backoff
    },
    { concurrency: 16 },
  )

  await new Promise((resolve) => setTimeout(resolve, 3000))
  await sub.close()
  await client.close()
}

main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
