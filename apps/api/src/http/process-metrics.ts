import { performance } from "node:perf_hooks"
import {
  bodyBytesArriving,
  MAX_BUFFERED_BODY_BYTES,
  MAX_BUFFERED_BODY_BYTES_PER_NETWORK,
  networksWithBodiesArriving,
} from "./capped-request.js"

// Read from Node when scraped. Written here rather than taken from prom-client: these are a handful of
// readings of Node's own APIs, and a second registry beside Effect's metrics would split /metrics in two.
const families = (): ReadonlyArray<readonly [name: string, type: string, help: string, value: number]> => {
  const cpu = process.cpuUsage()
  const memory = process.memoryUsage()
  const loop = performance.eventLoopUtilization()
  return [
    ["process_cpu_user_seconds_total", "counter", "User CPU time of the process", cpu.user / 1e6],
    ["process_cpu_system_seconds_total", "counter", "System CPU time of the process", cpu.system / 1e6],
    ["process_resident_memory_bytes", "gauge", "Resident memory of the process", memory.rss],
    ["nodejs_heap_used_bytes", "gauge", "V8 heap in use", memory.heapUsed],
    [
      "http_request_body_bytes_arriving",
      "gauge",
      `Request body bytes held while their bodies arrive (at most ${MAX_BUFFERED_BODY_BYTES}: past it, 503)`,
      bodyBytesArriving(),
    ],
    [
      "http_request_body_networks_arriving",
      "gauge",
      `Source networks whose requests hold body bytes now (each at most ${MAX_BUFFERED_BODY_BYTES_PER_NETWORK}: past it, 503)`,
      networksWithBodiesArriving(),
    ],
    [
      "nodejs_eventloop_active_seconds_total",
      "counter",
      "Time the event loop (the process's one JavaScript thread) spent running code",
      loop.active / 1000,
    ],
    [
      "nodejs_eventloop_idle_seconds_total",
      "counter",
      "Time the event loop waited for I/O",
      loop.idle / 1000,
    ],
  ]
}

/**
 * The process's CPU time, resident memory, heap in use, and its event loop's busy and idle time, in the
 * Prometheus text format: busy / (busy + idle) over an interval is how loaded the one JavaScript thread was.
 */
export const processMetricsText = (): string =>
  families()
    .map(([name, type, help, value]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`)
    .join("")
