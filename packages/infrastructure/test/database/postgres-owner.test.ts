import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { forgetOwner, processIdentity, recordOwner } from "../../src/database/postgres-owner.js"

// A live process of another id than this one, for as long as the scope.
const anotherProcess = Effect.acquireRelease(
  Effect.sync(() => spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" })),
  (child) => Effect.sync(() => child.kill("SIGKILL")),
)

describe("The owner record of an embedded server's data", () => {
  it.scoped(
    "is left to another live process's start, and taken once this process's server runs on the data",
    () =>
      Effect.gen(function* () {
        const root = yield* Effect.acquireRelease(
          Effect.promise(() => mkdtemp(join(tmpdir(), "points-owner-"))),
          (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
        )
        const other = yield* anotherProcess
        const otherPid = other.pid ?? 0
        const record = () => JSON.parse(readFileSync(join(root, "postgres.owner"), "utf8"))
        // Another process started on the data at the same moment, and recorded its start first.
        const theirs = {
          pid: otherPid,
          identity: processIdentity(otherPid),
          postmaster: null,
          postmasterIdentity: null,
        }
        yield* Effect.promise(() => writeFile(join(root, "postgres.owner"), JSON.stringify(theirs)))
        // This process's start leaves that record: the other start may yet be the one whose server runs.
        recordOwner(root, null)
        expect(record()).toEqual(theirs)
        // This process's server runs on the data: the other start lost, and its record gives way, so that
        // its failing start (which removes its own record only) leaves the running server an owner.
        recordOwner(root, process.pid)
        expect(record()).toEqual({
          pid: process.pid,
          identity: processIdentity(process.pid),
          postmaster: process.pid,
          postmasterIdentity: processIdentity(process.pid),
        })
        forgetOwner(root)
        expect(() => record()).toThrow(/ENOENT/)
      }),
  )
})
