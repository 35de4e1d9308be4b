import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"

const packageDirectory = fileURLToPath(new URL("..", import.meta.url))

/**
 * Starts a test script of this package (`test/...ts`) in a process of its own, on the sources (tsx), with
 * these variables added, and waits until it writes "ready" on a line; dies if it exits before.
 */
export const readyProcess = (script: string, env: Readonly<Record<string, string>>) =>
  Effect.async<ChildProcess>((resume) => {
    const child = spawn(process.execPath, ["--conditions=@points/source", "--import", "tsx", script], {
      cwd: packageDirectory,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    })
    let output = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes("ready\n")) resume(Effect.succeed(child))
    })
    child.on("exit", (code) => resume(Effect.dieMessage(`${script} exited early (${code})`)))
  })
