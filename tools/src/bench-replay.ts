// Replay benchmark: folds a 100,000-event points-account stream through the ledger's `evolve`, the work done
// every time an account is loaded. Pure folding must never be the bottleneck: target >= 1,000,000 events/s.
// Prints one line per stream mix, and as its last line the JSON figure for the realistic mix.
import { fold, Ledger } from "@points/domain"
import { type LedgerStreamMix, ledgerStream } from "./ledger-stream.js"

const EVENTS = 100_000
const RUNS = 15

/** Folds the stream RUNS times after a warm-up and returns the median throughput in events per second. */
const measure = (events: ReadonlyArray<Ledger.LedgerEvent>): number => {
  for (let warmup = 0; warmup < 3; warmup++) fold(Ledger.decider, events)
  const rates: Array<number> = []
  for (let run = 0; run < RUNS; run++) {
    const started = process.hrtime.bigint()
    const state = fold(Ledger.decider, events)
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    if (state._tag === "NoAccount" || state.version !== events.length) throw new Error("the fold lost events")
    rates.push(events.length / seconds)
  }
  rates.sort((a, b) => a - b)
  return Math.round(rates[Math.floor(RUNS / 2)] ?? 0)
}

const mixes: ReadonlyArray<readonly [string, LedgerStreamMix]> = [
  ["adds only", { add: 1, subtract: 0, debit: 0, refund: 0 }],
  ["orders only (debits and refunds)", { add: 0.2, subtract: 0, debit: 0.5, refund: 0.3 }],
  [
    "realistic (60% add, 20% subtract, 12% order debit, 8% refund)",
    { add: 0.6, subtract: 0.2, debit: 0.12, refund: 0.08 },
  ],
]

let realistic = 0
for (const [label, mix] of mixes) {
  const events = ledgerStream(EVENTS, mix)
  const rate = measure(events)
  realistic = rate
  console.log(`${label}: ${rate.toLocaleString("en")} events/s (median of ${RUNS})`)
}
console.log(JSON.stringify({ name: "replay", events: EVENTS, events_per_s: realistic }))
