/**
 * `npm run demo` — run in a second terminal after `npm start`. A scripted agent shows the
 * per-step verdicts of a run that starts on track, then drifts and loops (scripts/demo-agent.ts).
 *
 * Server: `--url` or GOALKEEPER_URL (default http://127.0.0.1:8080).
 * API key: `--key` or GOALKEEPER_API_KEY (the bootstrap key `npm start` prints on first start).
 */
import { DemoHttpError, runDemo } from './demo-agent.js'

function arg(name: string): string | undefined {
  const args = process.argv.slice(2)
  const i = args.indexOf(`--${name}`)
  if (i >= 0) return args[i + 1]
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`)
  process.exit(1)
}

async function main(): Promise<void> {
  const baseUrl = arg('url') ?? process.env.GOALKEEPER_URL ?? 'http://127.0.0.1:8080'
  const apiKey = arg('key') ?? process.env.GOALKEEPER_API_KEY
  if (!apiKey) {
    fail(
      'No API key. Pass --key gk_… or set GOALKEEPER_API_KEY: use the bootstrap key `npm start` prints on its first\n' +
        'start, or create an agent with POST /v1/agents (admin token) and use its api_key.',
    )
  }
  try {
    const res = await fetch(new URL('/healthz', baseUrl))
    await res.arrayBuffer()
  } catch {
    fail(`No goalkeeper server answers at ${baseUrl}. Start one with \`npm start\` in another terminal, or pass --url.`)
  }
  console.log(`goalkeeper demo against ${baseUrl}\n`)
  try {
    await runDemo({ baseUrl, apiKey })
  } catch (err) {
    if (err instanceof DemoHttpError && err.status === 401) fail(`The server refused the API key (401). Check GOALKEEPER_API_KEY / --key.`)
    if (err instanceof DemoHttpError && err.status === 404) fail(`${err.message}\nDoes this server have the goal-session routes (/v1/sessions)?`)
    throw err
  }
}

await main()
