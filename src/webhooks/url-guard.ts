import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { lookup as dnsLookupAsync } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { fieldPath, invalidField, unprocessable } from '../errors.js'

// ipaddr.js range names that are public unicast; everything else (loopback, private, linkLocal,
// uniqueLocal, multicast, unspecified, carrierGradeNat, reserved, ...) is refused.
const PUBLIC_RANGES = new Set(['unicast', 'global'])

/** True when an IP literal (v4, v6, or IPv4-mapped v6) is not a public unicast address. */
export function isForbiddenAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true
  let ip = ipaddr.parse(address)
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address()
  return !PUBLIC_RANGES.has(ip.range())
}

// Create and update both take the URL as the body's `url` field.
const URL_PATH = fieldPath('body', 'url')

function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

/** An absolute http(s) URL (WHATWG parsing, as the delivery agent reads it), or undefined. */
function httpUrl(raw: string): URL | undefined {
  if (!URL.canParse(raw)) return undefined
  const url = new URL(raw)
  return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined
}

/**
 * Validates a webhook URL at create/update time. Not an absolute http(s) URL: malformed input,
 * a 400. A well-formed one that cannot be used (credentials in it; unless private targets are
 * allowed, a host resolving to any non-public address): a 422.
 */
export async function assertWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = httpUrl(raw)
  if (url === undefined) throw invalidField(URL_PATH, 'must be an absolute http or https URL')
  if (url.username || url.password) {
    throw unprocessable('Webhook URLs must not carry credentials.', [{ path: URL_PATH, message: 'credentials in URL' }])
  }
  if (allowPrivate) return url
  const host = bareHost(url.hostname)
  let addresses: string[]
  if (isIP(host)) addresses = [host]
  else {
    try {
      addresses = (await dnsLookupAsync(host, { all: true })).map((a) => a.address)
    } catch {
      throw unprocessable(`The webhook host ${host} does not resolve.`, [{ path: URL_PATH, message: 'host does not resolve' }])
    }
  }
  const bad = addresses.find(isForbiddenAddress)
  if (bad !== undefined) {
    // Name the setting: a receiver on the same machine or network is the usual first try.
    throw unprocessable(
      `The webhook host resolves to a non-public address (${bad}); to allow loopback and private targets ` +
        '(a receiver on this machine or network), start the server with GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS=true.',
      [{ path: URL_PATH, message: 'resolves to a loopback, private or otherwise non-public address' }],
    )
  }
  return url
}

/** Raised at delivery time when the address actually connected to is not public. */
class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDRESS'
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `net.connect` lookup that resolves like the default and refuses non-public results. Used by
 * the delivery agent, so a host that re-resolves to 127.0.0.1 after validation (DNS rebinding)
 * is still refused: the check applies to the very address the socket connects to.
 */
export function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, [])
    const list = addresses as LookupAddress[]
    const bad = list.find((a) => isForbiddenAddress(a.address))
    if (bad) return callback(new ForbiddenAddressError(`refused non-public address ${bad.address} for ${hostname}`), [])
    if ((options as { all?: boolean }).all) return callback(null, list)
    const first = list[0]
    if (!first) return callback(new ForbiddenAddressError(`no address for ${hostname}`), [])
    callback(null, first.address, first.family)
  })
}

/** IP-literal hosts never reach a lookup, so the delivery path checks them directly. */
export function literalHostForbidden(url: URL): boolean {
  const host = bareHost(url.hostname)
  return isIP(host) !== 0 && isForbiddenAddress(host)
}
