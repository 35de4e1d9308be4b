// How the HTTP benchmark prints a run: the figures of each side, its warm-up, its CPU time per answer, and
// the targets met or missed.
import { loadavg } from "node:os"
import { type LoadResult, percentile, type Settled, statusesText } from "./bench-http-load.js"

/** A whole number with thousands separators. */
export const count = (n: number) => Math.round(n).toLocaleString("en")

/** Milliseconds to two decimals. */
export const ms = (n: number) => n.toFixed(2)

/** Answers other than 201, socket errors (timeouts included) and 201 bodies that do not match their request. */
export const errorsOf = (result: LoadResult) =>
  [...result.statuses.entries()].reduce((sum, [status, n]) => (status === 201 ? sum : sum + n), 0) +
  result.connectionErrors +
  result.mismatches

/** What a measured run comes to: 201 answers per second, latency of every answer, errors. */
export interface Figures {
  readonly rate: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
}

/** Prints a measured run's figures and returns them; a run without a single answer measured nothing. */
export const report = (label: string, result: LoadResult): Figures => {
  if (result.latencies.length === 0) {
    throw new Error(`${label}: no answer at all in ${result.seconds.toFixed(0)} s, nothing measured`)
  }
  const created = result.statuses.get(201) ?? 0
  const figures = {
    rate: created / result.seconds,
    p50: percentile(result.latencies, 0.5),
    p99: percentile(result.latencies, 0.99),
    errors: errorsOf(result),
  }
  console.log(
    `${label}: ${count(figures.rate)} req/s (${count(created)} answered 201 in ${result.seconds.toFixed(1)} s); ` +
      `latency p50 ${ms(figures.p50)} ms, p90 ${ms(percentile(result.latencies, 0.9))} ms, p99 ` +
      `${ms(figures.p99)} ms, max ${ms(result.latencies.at(-1) ?? 0)} ms`,
  )
  console.log(
    `${label}: statuses ${statusesText(result.statuses)}; errors ${figures.errors} (connection errors ` +
      `${result.connectionErrors} incl. timeouts ${result.timeouts}, 201 bodies not matching the request ` +
      `${result.mismatches}); unanswered at the end of the run ${result.unanswered.size}`,
  )
  return figures
}

/** One line for a warm-up, which is not measured but may show errors early. */
export const warmUpText = (label: string, seconds: number, result: LoadResult) =>
  `${label} warm-up: ${seconds} s, statuses ${statusesText(result.statuses)}, errors ${errorsOf(result)}`

/** One line for the unanswered requests of a run, sent again with their keys. */
export const settledText = (label: string, settled: Settled) =>
  `${label}: unanswered requests sent again with their Idempotency-Key: ${statusesText(settled.statuses)}` +
  (settled.unsettled > 0 ? `, ${settled.unsettled} still in progress or unanswered` : "") +
  (settled.mismatches > 0 ? `, ${settled.mismatches} 201 bodies not matching the request` : "")

/** CPU time per answer of a measured run: what a request costs each process, whatever else the machine runs. */
export const cpuText = (
  label: string,
  result: LoadResult,
  cpuMs: { readonly server: number; readonly postgres: number },
) => {
  const answers = result.latencies.length
  return (
    `${label}: CPU time per answer ${(cpuMs.server / answers).toFixed(2)} ms in the node process, ` +
    `${(cpuMs.postgres / answers).toFixed(2)} ms in PostgreSQL`
  )
}

/** The machine's load averages (1, 5, 15 minutes): other work weighs more on the side with more to do. */
export const loadText = () =>
  loadavg()
    .map((load) => load.toFixed(1))
    .join(" / ")

/** A target's verdict, loud when missed. */
export const verdict = (met: boolean) => (met ? "met" : "MISSED")

/**
 * What the API's `/metrics` counters grew by over the measured run (`grown`): how busy its one JavaScript thread was (event loop
 * busy / (busy + idle)), and how many requests its write batches held on average.
 */
export const apiInsideText = (grown: ReadonlyMap<string, number>) => {
  const grew = (sample: string) => grown.get(sample) ?? 0
  const busy = grew("nodejs_eventloop_active_seconds_total")
  const idle = grew("nodejs_eventloop_idle_seconds_total")
  const batches = grew('write_batches_total{outcome="committed"}')
  const batched = grew('write_batch_requests_total{result="committed"}')
  return (
    `API: event loop (its one JavaScript thread) busy ${((100 * busy) / Math.max(busy + idle, 1e-9)).toFixed(0)} % ` +
    `of the run; ${count(batches)} write batches, ${batches === 0 ? 0 : (batched / batches).toFixed(1)} requests each on average`
  )
}
