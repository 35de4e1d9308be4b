import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck, ParseResult, Schema } from "effect"
import { WebhookEndpoint } from "../src/index.js"

const { targetProblem } = WebhookEndpoint
const refusedPrivate = "must not point to a private or loopback address"
const strict = { allowPrivateTargets: false }
const relaxed = { allowPrivateTargets: true }

// Each non-public IPv4 range as [first address as an unsigned 32-bit number, prefix length].
const nonPublicIpv4: ReadonlyArray<readonly [number, number]> = [
  [0x00000000, 8], // 0.0.0.0/8
  [0x0a000000, 8], // 10/8
  [0x64400000, 10], // 100.64/10
  [0x7f000000, 8], // 127/8
  [0xa9fe0000, 16], // 169.254/16
  [0xac100000, 12], // 172.16/12
  [0xc0a80000, 16], // 192.168/16
  [0xc0000000, 24], // 192.0.0/24
  [0xc0000200, 24], // 192.0.2/24
  [0xc0586300, 24], // 192.88.99/24
  [0xc6120000, 15], // 198.18/15
  [0xc6336400, 24], // 198.51.100/24
  [0xcb007100, 24], // 203.0.113/24
  [0xe0000000, 3], // multicast 224/4 and reserved 240/4
]
const inRange = (address: number, [base, prefix]: readonly [number, number]) =>
  address >>> (32 - prefix) === base >>> (32 - prefix)
const dotted = (address: number) => [24, 16, 8, 0].map((shift) => (address >>> shift) & 0xff).join(".")
const hex = (group: number) => group.toString(16)

const nonPublicAddress = FastCheck.constantFrom(...nonPublicIpv4).chain(([base, prefix]) =>
  FastCheck.integer({ min: 0, max: 2 ** (32 - prefix) - 1 }).map((offset) => (base + offset) >>> 0),
)
const publicAddress = FastCheck.integer({ min: 0, max: 0xffffffff }).filter(
  (address) => !nonPublicIpv4.some((range) => inRange(address, range)),
)
// Every spelling of an IPv4 address a URL parser accepts and resolves to it, and the 6to4 form that reaches it.
const ipv4Host = (address: number) =>
  FastCheck.constantFrom(
    dotted(address),
    String(address),
    `0x${address.toString(16)}`,
    `[::ffff:${dotted(address)}]`,
    `[::ffff:${hex(address >>> 16)}:${hex(address & 0xffff)}]`,
    `[0:0:0:0:0:FFFF:${dotted(address)}]`,
    `[2002:${hex(address >>> 16)}:${hex(address & 0xffff)}::1]`, // 6to4, through a relay
  )
const group = FastCheck.integer({ min: 0, max: 0xffff })
const ipv6Host = FastCheck.oneof(
  FastCheck.constantFrom("[::1]", "[0:0:0:0:0:0:0:1]", "[0000::0001]", "[::]"),
  // fc00::/7 (unique local) and fe80::/10 (link-local), the rest of the address random.
  FastCheck.tuple(
    FastCheck.oneof(
      FastCheck.integer({ min: 0xfc00, max: 0xfdff }),
      FastCheck.integer({ min: 0xfe80, max: 0xfebf }),
    ),
    FastCheck.array(group, { minLength: 7, maxLength: 7 }),
  ).map(([first, rest]) => `[${[first, ...rest].map(hex).join(":")}]`),
)
const localhostHost = FastCheck.oneof(
  FastCheck.constantFrom("localhost", "LOCALHOST", "localhost."),
  FastCheck.domain().map((name) => `${name.split(".")[0]}.localhost`),
)
const privateHost = FastCheck.oneof(nonPublicAddress.chain(ipv4Host), ipv6Host, localhostHost)
const port = FastCheck.option(FastCheck.integer({ min: 1, max: 65535 }), { nil: undefined })
const urlAt = (host: string, scheme: "https" | "http", portNumber: number | undefined) =>
  `${scheme}://${host}${portNumber === undefined ? "" : `:${portNumber}`}/hooks`

describe("Webhook targets", () => {
  it("refuses loopback, private, link-local and CGNAT literals, localhost, and IPv4-mapped forms of them", () => {
    for (const url of [
      "https://127.0.0.1/",
      "https://127.255.255.254:8443/x",
      "https://10.0.0.1/",
      "https://172.16.0.1/",
      "https://172.31.255.255/",
      "https://192.168.1.1/",
      "https://169.254.169.254/latest/meta-data",
      "https://0.0.0.0/",
      "https://100.64.0.1/",
      "https://100.127.255.255/",
      "https://2130706433/",
      "https://0x7f.1/",
      "https://[::1]/",
      "https://[::]/",
      "https://[fc00::1]/",
      "https://[fd12:3456::1]/",
      "https://[fe80::1]/",
      "https://[febf::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:a9fe:a9fe]/",
      "https://224.0.0.1/",
      "https://255.255.255.255/",
      "https://[64:ff9b::7f00:1]/",
      "https://[64:ff9b::10.0.0.1]/",
      "https://[ff02::1]/",
      "https://localhost/",
      "https://api.localhost/",
      "https://LocalHost./",
    ]) {
      expect(targetProblem(url, strict), url).toBe(refusedPrivate)
      expect(targetProblem(url, relaxed), url).toBeNull()
    }
  })

  it("refuses documentation, reserved and deprecated ranges, and IPv6 forms that embed a private IPv4", () => {
    for (const url of [
      "https://192.0.2.1/", // documentation (TEST-NET-1)
      "https://198.51.100.7/", // documentation (TEST-NET-2)
      "https://203.0.113.255/", // documentation (TEST-NET-3)
      "https://192.88.99.1/", // 6to4 relay anycast
      "https://[2001:db8::1]/", // documentation
      "https://[2001:db8:ffff:ffff::1]/",
      "https://[100::1]/", // discard-only
      "https://[100::ffff:ffff:ffff:ffff]/",
      "https://[fec0::1]/", // deprecated site-local
      "https://[feff::1]/",
      "https://[::127.0.0.1]/", // IPv4-compatible
      "https://[::10.0.0.1]/",
      "https://[::8.8.8.8]/",
      "https://[::2]/",
      "https://[2002:7f00:1::]/", // 6to4 of 127.0.0.1
      "https://[2002:a00:1::]/", // 6to4 of 10.0.0.1
      "https://[2002:a9fe:a9fe::1]/", // 6to4 of 169.254.169.254
      "https://[2002:c000:201::]/", // 6to4 of 192.0.2.1
      "https://[64:ff9b:1::a00:1]/", // local-use NAT64 of 10.0.0.1
      "https://[64:ff9b:1::7f00:1]/", // local-use NAT64 of 127.0.0.1
      "https://[64:ff9b:1:0:a:0:100:0]/", // 10.0.0.1 under a /64 local-use prefix (RFC 6052)
      "https://[64:ff9b:1::8.8.8.8]/", // local use reaches our own translator only
      "https://[64:ff9b::c633:6401]/", // NAT64 of 198.51.100.1
      "https://[::ffff:203.0.113.9]/", // IPv4-mapped documentation address
      "https://[::ffff:0:7f00:1]/", // IPv4-translated 127.0.0.1 (RFC 2765)
      "https://[::ffff:0:a9fe:a9fe]/", // IPv4-translated 169.254.169.254
      "https://[2001::1]/", // Teredo
      "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", // Teredo
    ]) {
      expect(targetProblem(url, strict), url).toBe(refusedPrivate)
      expect(targetProblem(url, relaxed), url).toBeNull()
    }
  })

  it("accepts public https targets, including neighbours of the refused ranges", () => {
    for (const url of [
      "https://hooks.acme.example/points",
      "https://172.15.255.255/",
      "https://172.32.0.1/",
      "https://100.63.255.255/",
      "https://100.128.0.1/",
      "https://192.169.0.1/",
      "https://169.253.0.1/",
      "https://1.1.1.1:8443/x?y=1",
      "https://[fe7f::1]/",
      "https://8.8.8.8/",
      "https://192.0.1.255/",
      "https://192.0.3.0/",
      "https://198.51.99.1/",
      "https://203.0.112.255/",
      "https://192.88.98.1/",
      "https://[2606:4700::1111]/",
      "https://[2001:db9::1]/",
      "https://[2001:4860:4860::8888]/",
      "https://[100:0:0:1::1]/",
      "https://[2002:808:808::]/", // 6to4 of 8.8.8.8
      "https://[::ffff:0:808:808]/", // IPv4-translated 8.8.8.8
      "https://[2001:1::1]/", // next to Teredo
      "https://[2002:101:101::1]/", // 6to4 of 1.1.1.1
      "https://[64:ff9b::1.1.1.1]/",
      "https://[::ffff:8.8.8.8]/",
      "https://[64:ff9b::8.8.8.8]/",
      "https://223.255.255.255/",
      "https://198.20.0.1/",
      "https://localhost.acme.example/",
    ]) {
      expect(targetProblem(url, strict), url).toBeNull()
    }
  })

  it("takes plain http only where private targets are allowed", () => {
    expect(targetProblem("http://hooks.acme.example/", strict)).toBe("must use https")
    expect(targetProblem("http://hooks.acme.example/", relaxed)).toBeNull()
    expect(targetProblem("ftp://hooks.acme.example/", relaxed)).toBe("must be an absolute http or https URL")
    expect(targetProblem("/relative", relaxed)).toBe("must be an absolute http or https URL")
  })

  it("a webhook url is an absolute http(s) URL of at most 2048 characters, sent without spaces", () => {
    const isUrl = Schema.is(WebhookEndpoint.WebhookUrl)
    const long = `https://hooks.acme.example/${"p".repeat(2048 - 27)}`
    expect(long).toHaveLength(2048)
    expect([long, "http://localhost:3000/hooks", "https://[::1]/"].every(isUrl)).toBe(true)
    expect(
      [
        `${long}p`,
        "",
        "hooks.acme.example",
        "ftp://acme.example/",
        "https://acme.example/a b",
        "https://acme\n.example/",
      ].some(isUrl),
    ).toBe(false)
  })

  it("a webhook url is written as it is called: `//` and a host, no user name or password, no port 0", () => {
    const problemOf = (text: string) =>
      Either.match(Schema.decodeUnknownEither(WebhookEndpoint.WebhookUrl)(text), {
        onLeft: (error) => ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message,
        onRight: () => null,
      })
    expect(problemOf("https:hooks.acme.example/in")).toBe("must be an absolute http or https URL")
    expect(problemOf("https:///hooks.acme.example/in")).toBe("must be an absolute http or https URL")
    expect(problemOf("https://user:secret@hooks.acme.example/in")).toBe(
      "must not contain a user name or password",
    )
    expect(problemOf("https://user@hooks.acme.example/in")).toBe("must not contain a user name or password")
    expect(problemOf("https://hooks.acme.example:0/in")).toBe("must not name port 0")
    expect(problemOf("HTTPS://hooks.acme.example:8443/in")).toBeNull()
  })

  it("property: no loopback or private literal, in any spelling, is ever accepted unless allowed", () => {
    FastCheck.assert(
      FastCheck.property(
        privateHost,
        FastCheck.constantFrom<"https" | "http">("https", "http"),
        port,
        (host, scheme, portNumber) => {
          const url = urlAt(host, scheme, portNumber)
          expect(targetProblem(url, strict), url).not.toBeNull()
          expect(targetProblem(url, relaxed), url).toBeNull()
        },
      ),
      { numRuns: 1000 },
    )
  })

  it("property: every public IPv4 address over https is accepted, in any spelling", () => {
    FastCheck.assert(
      FastCheck.property(publicAddress.chain(ipv4Host), port, (host, portNumber) => {
        const url = urlAt(host, "https", portNumber)
        expect(targetProblem(url, strict), url).toBeNull()
      }),
      { numRuns: 1000 },
    )
  })
})
