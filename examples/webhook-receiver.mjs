// A webhook receiver for trying goalkeeper out: it verifies each delivery's Standard Webhooks
// signature and prints the verified ones. Run from the repository folder (standardwebhooks is a
// dev dependency; elsewhere, `npm install standardwebhooks`):
//   WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.mjs    (RECEIVER_PORT, default 9000)
import { createServer } from 'node:http'
import { Webhook } from 'standardwebhooks'

const wh = new Webhook(process.env.WEBHOOK_SECRET)
const port = Number(process.env.RECEIVER_PORT ?? 9000)

createServer((req, res) => {
  const chunks = []
  req
    .on('data', (c) => chunks.push(c))
    .on('end', () => {
      try {
        // Throws unless webhook-signature matches "id.timestamp.body" and the timestamp is within 5 minutes.
        const event = wh.verify(Buffer.concat(chunks).toString('utf8'), req.headers)
        // webhook-id is the same on every retry of one event: deduplicate on it.
        console.log(req.headers['webhook-id'], event.type, JSON.stringify(event.data))
        res.writeHead(204).end()
      } catch {
        res.writeHead(400).end()
      }
    })
}).listen(port, '127.0.0.1')
