// A long-running worker that stops gracefully on SIGTERM / SIGINT: it stops fetching, lets the
// handlers that are running finish, and exits by itself. Messages that were not finished are
// delivered again to another worker when their lease runs out; nothing is lost.
import { Client, Message, RedelayError, RetryLater, ErrorCodes } from 'redelay'

async function sendEmail(to: string, body: string): Promise<void> {
  if (!to.includes('@')) throw new Error(`bad address ${to}`) // nacked as "Error: bad address …"
  console.log(`mail to ${to}: ${body}`)
}

async function main(): Promise<void> {
  const client = await Client.connect(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    prefix: 'myapp',
  })
  const emails = client.queue('emails')

  const sub = await emails.subscribe(
    async (msg: Message) => {
      const { to, body } = msg.json<{ to: string; body: string }>()
      if (msg.headers['rate-limited'] === 'yes' && msg.attempt === 1) {
        throw new RetryLater('provider rate limit', 5_000) // retry in 5 s
      }
      await sendEmail(to, body)
    },
    { concurrency: 32, drainTimeoutMs: 10_000 },
  )
  console.log('worker running; Ctrl-C or SIGTERM to stop')

  const stop = async (signal: string): Promise<void> => {
    console.log(`${signal}: draining`)
    await sub.close() // running handlers finish first
    await client.close()
    const c = sub.counters()
    console.log(`stopped: ${c.acked} acked, ${c.nacked} nacked`)
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))

  try {
    await emails.publish(JSON.stringify({ to: 'ann@example.com', body: 'hi' }), { id: 'welcome-ann' })
  } catch (err) {
    if (err instanceof RedelayError && err.code === ErrorCodes.InvalidArgument) {
      console.error(`refused: ${err.message}`)
    } else {
      throw err
    }
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
