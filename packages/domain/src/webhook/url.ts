import { Schema } from "effect"
import { Limits, maxCharacters, wellFormed } from "../shared/text.js"

const parse = (text: string): URL | null => {
  try {
    return new URL(text)
  } catch {
    return null
  }
}

// The URL parser silently drops tabs and newlines and trims spaces, so a value containing them is not the
// address the endpoint would be called at; such values are refused as sent.
const hasControlOrSpace = (text: string): boolean => {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code <= 0x20 || code === 0x7f) return true
  }
  return false
}

const isHttpUrl = (text: string): boolean => {
  const url = parse(text)
  return url !== null && (url.protocol === "https:" || url.protocol === "http:")
}

// The parser also takes `https:host/x` and `https:///host/x` for `https://host/x`: the address must be written
// as it is called.
const writtenWithAuthority = (text: string): boolean => /^https?:\/\/[^/?#]/i.test(text)

// A user name or password in the address would be stored and shown back (GET, lists): not a place for one.
const hasNoUserInfo = (text: string): boolean => {
  const url = parse(text)
  return url !== null && url.username === "" && url.password === ""
}

// Port 0 names no service a request can reach.
const hasUsablePort = (text: string): boolean => parse(text)?.port !== "0"

/**
 * A webhook endpoint's address: an absolute http or https URL of at most 2048 characters, written with its
 * `//` and host, without a user name or password.
 */
export const WebhookUrl = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  maxCharacters(Limits.webhookUrl),
  Schema.filter((text) => !hasControlOrSpace(text), {
    message: () => "must not contain spaces or control characters",
  }),
  // The URL parser would replace a lone surrogate with U+FFFD: refused as sent, like controls and spaces.
  wellFormed,
  Schema.filter((text) => isHttpUrl(text) && writtenWithAuthority(text), {
    message: () => "must be an absolute http or https URL",
    // Random strings are almost never URLs; generate URLs instead for property tests and round trips.
    arbitrary: () => (fc) =>
      fc
        .webUrl({ withQueryParameters: true })
        .filter(
          (url) =>
            url.length <= Limits.webhookUrl &&
            !hasControlOrSpace(url) &&
            isHttpUrl(url) &&
            writtenWithAuthority(url) &&
            hasNoUserInfo(url) &&
            hasUsablePort(url),
        ),
  }),
  Schema.filter(hasNoUserInfo, { message: () => "must not contain a user name or password" }),
  Schema.filter(hasUsablePort, { message: () => "must not name port 0" }),
  Schema.brand("WebhookUrl"),
  Schema.annotations({ identifier: "WebhookUrl" }),
)
export type WebhookUrl = typeof WebhookUrl.Type

type Ipv4 = readonly [number, number, number, number]

const parseIpv4 = (text: string): Ipv4 | null => {
  const parts = text.split(".")
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return null
  const [a = 0, b = 0, c = 0, d = 0] = parts.map(Number)
  return [a, b, c, d].every((octet) => octet <= 255) ? [a, b, c, d] : null
}

// Eight 16-bit groups, or null when the text is not an IPv6 address; accepts `::` and a dotted IPv4 tail.
const parseIpv6 = (text: string): ReadonlyArray<number> | null => {
  const halves = text.split("::")
  if (halves.length > 2) return null
  const groupsOf = (part: string, mayEndInIpv4: boolean): Array<number> | null => {
    if (part === "") return []
    const pieces = part.split(":")
    const groups: Array<number> = []
    for (const [index, piece] of pieces.entries()) {
      if (mayEndInIpv4 && index === pieces.length - 1 && piece.includes(".")) {
        const ipv4 = parseIpv4(piece)
        if (ipv4 === null) return null
        groups.push(ipv4[0] * 256 + ipv4[1], ipv4[2] * 256 + ipv4[3])
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        groups.push(Number.parseInt(piece, 16))
      } else {
        return null
      }
    }
    return groups
  }
  const [first = "", second] = halves
  const head = groupsOf(first, second === undefined)
  if (head === null) return null
  if (second === undefined) return head.length === 8 ? head : null
  const tail = groupsOf(second, true)
  if (tail === null) return null
  const missing = 8 - head.length - tail.length
  return missing >= 1 ? [...head, ...Array<number>(missing).fill(0), ...tail] : null
}

const isNonPublicIpv4 = ([a, b, c]: Ipv4): boolean =>
  a === 0 || // "this network", 0.0.0.0/8 (connecting to 0.0.0.0 reaches the local host)
  a === 10 ||
  a === 127 ||
  (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
  (a === 169 && b === 254) ||
  (a === 172 && b >= 16 && b <= 31) ||
  (a === 192 && b === 168) ||
  (a === 192 && b === 0 && c === 0) || // IETF protocol assignments, 192.0.0.0/24
  (a === 192 && b === 0 && c === 2) || // documentation (TEST-NET-1), 192.0.2.0/24
  (a === 192 && b === 88 && c === 99) || // 6to4 relay anycast, 192.88.99.0/24 (deprecated)
  (a === 198 && (b === 18 || b === 19)) || // benchmarking, 198.18.0.0/15
  (a === 198 && b === 51 && c === 100) || // documentation (TEST-NET-2), 198.51.100.0/24
  (a === 203 && b === 0 && c === 113) || // documentation (TEST-NET-3), 203.0.113.0/24
  a >= 224 // multicast 224/4, reserved 240/4 and the broadcast address

const isNonPublicIpv6 = (groups: ReadonlyArray<number>): boolean => {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0
  // ::/96 holds :: (unspecified), ::1 (loopback) and the deprecated IPv4-compatible forms, which some stacks
  // still send to the IPv4 address they embed: none is a public target.
  if (upperZero && g5 === 0) return true
  const embedded: Ipv4 = [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]
  if (upperZero && g5 === 0xffff) return isNonPublicIpv4(embedded) // IPv4-mapped
  // IPv4-translated (::ffff:0:0:0/96, RFC 2765) reaches the IPv4 address it embeds, as a mapped one does.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0)
    return isNonPublicIpv4(embedded)
  // Teredo (2001::/32) reaches, through a relay, an IPv4 client address it embeds obfuscated: none of it is
  // a target a partner's server has.
  if (g0 === 0x2001 && g1 === 0) return true
  // NAT64 (64:ff9b::/96) reaches the IPv4 address it embeds.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return isNonPublicIpv4(embedded)
  // The local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) only reaches a translator of our own network, and
  // where it embeds the IPv4 address depends on that network's prefix length (RFC 6052): a private one could
  // hide anywhere in it, so none of it is a public target.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return true
  // 6to4 (2002::/16) reaches, through a relay, the IPv4 address in its bits 16 to 47.
  if (g0 === 0x2002) return isNonPublicIpv4([g1 >> 8, g1 & 0xff, g2 >> 8, g2 & 0xff])
  return (
    (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) || // discard-only 100::/64
    (g0 === 0x2001 && g1 === 0xdb8) || // documentation 2001:db8::/32
    (g0 & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (g0 & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (g0 & 0xffc0) === 0xfec0 || // deprecated site-local fec0::/10, private like fc00::/7
    (g0 & 0xff00) === 0xff00 // multicast ff00::/8
  )
}

/** True when a URL host (as `URL.hostname` gives it) is `localhost` or a literal address that is not public. */
export const isPrivateHost = (hostname: string): boolean => {
  const host = hostname.toLowerCase().replace(/\.$/, "")
  if (host === "localhost" || host.endsWith(".localhost")) return true
  if (host.startsWith("[") && host.endsWith("]")) {
    const groups = parseIpv6(host.slice(1, -1))
    return groups === null || isNonPublicIpv6(groups)
  }
  const ipv4 = parseIpv4(host)
  return ipv4 !== null && isNonPublicIpv4(ipv4)
}

/**
 * Why deliveries may not go to this URL, or null when they may: https is required and private, loopback and
 * link-local literal addresses (and `localhost`) are refused, unless private targets are allowed (local
 * development), which also allows plain http. Names that resolve to such addresses are infrastructure's to
 * refuse: it resolves them at registration and again at every delivery.
 */
export const targetProblem = (
  url: string,
  options: { readonly allowPrivateTargets: boolean },
): string | null => {
  const parsed = parse(url)
  if (parsed === null || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    return "must be an absolute http or https URL"
  }
  if (options.allowPrivateTargets) return null
  if (parsed.protocol === "http:") return "must use https"
  if (isPrivateHost(parsed.hostname)) return "must not point to a private or loopback address"
  return null
}
