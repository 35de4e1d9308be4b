import { execFile, spawn, spawnSync } from "node:child_process"
import { closeSync, openSync, readFileSync } from "node:fs"
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { inspect } from "node:util"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { issueToken, processAlive, startEmbeddedServer } from "@points/infrastructure"
import { testDatabase } from "@points/infrastructure/testing"
import { ConfigProvider, Console, Effect } from "effect"
import { adminProgram } from "../src/cli/program.js"
import { freePort, testDatabaseUrl } from "./processes.js"

const repositoryRoot = resolve(fileURLToPath(new URL("../../..", import.meta.url)))
const cliMain = join(repositoryRoot, "apps/api/src/cli/main.ts")

/** What one run of the CLI printed, and how it exited. */
interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the admin CLI as `npm run admin` does, as a real process, against `env`. */
const runCli = (args: ReadonlyArray<string>, env: Record<string, string | undefined>) =>
  Effect.async<Run>((resume) => {
    const child = execFile(
      process.execPath,
      ["--conditions=@points/source", "--import", "tsx", cliMain, ...args],
      { cwd: repositoryRoot, env: { ...process.env, ...env }, timeout: 90_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ code, stdout, stderr }))
      },
    )
    return Effect.sync(() => child.kill())
  })

/** Runs the CLI as a real process against this file's database with its stdout on /dev/full (a full disk). */
const adminProcessOnFullDisk = (...args: ReadonlyArray<string>) =>
  Effect.flatMap(testDatabaseUrl, (url) =>
    Effect.acquireUseRelease(
      Effect.sync(() => openSync("/dev/full", "w")),
      (full) =>
        Effect.async<Omit<Run, "stdout">>((resume) => {
          const child = spawn(
            process.execPath,
            ["--conditions=@points/source", "--import", "tsx", cliMain, ...args],
            {
              cwd: repositoryRoot,
              env: { ...process.env, DATABASE_URL: url },
              stdio: ["ignore", full, "pipe"],
            },
          )
          let stderr = ""
          child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
            stderr += chunk
          })
          child.on("close", (code) => resume(Effect.succeed({ code: code ?? -1, stderr })))
          return Effect.sync(() => child.kill())
        }),
      (full) => Effect.sync(() => closeSync(full)),
    ),
  )

/** Runs the CLI as a real process against this file's database: its exit code and stdio as a shell sees them. */
const adminProcess = (...args: ReadonlyArray<string>) =>
  Effect.flatMap(testDatabaseUrl, (url) => runCli(args, { DATABASE_URL: url }))

const printed = (args: ReadonlyArray<unknown>) =>
  `${args.map((arg) => (typeof arg === "string" ? arg : inspect(arg))).join(" ")}\n`

/**
 * Runs the CLI's program in this process (adminProgram, as main.ts runs it), its Console captured and `env`
 * read before the process's: what it prints and the exit code it ends with. A process of its own costs seconds
 * of loading per command; the commands' wiring into a real process is what adminProcess checks.
 */
const runHere = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.gen(function* () {
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const base = yield* Console.consoleWith(Effect.succeed)
    const to =
      (lines: Array<string>) =>
      (...args: ReadonlyArray<unknown>) => {
        lines.push(printed(args))
      }
    const captured: Console.Console = {
      ...base,
      log: (...args) => Effect.sync(() => to(stdout)(...args)),
      info: (...args) => Effect.sync(() => to(stdout)(...args)),
      error: (...args) => Effect.sync(() => to(stderr)(...args)),
      warn: (...args) => Effect.sync(() => to(stderr)(...args)),
      unsafe: { ...base.unsafe, log: to(stdout), info: to(stdout), error: to(stderr), warn: to(stderr) },
    }
    const provider = ConfigProvider.fromMap(new Map(Object.entries(env))).pipe(
      ConfigProvider.orElse(() => ConfigProvider.fromEnv()),
    )
    const code = yield* adminProgram(["node", "points-admin", ...args]).pipe(
      Effect.withConsole(captured),
      Effect.withConfigProvider(provider),
    )
    return { code, stdout: stdout.join(""), stderr: stderr.join("") } satisfies Run
  })

/** Runs the CLI's program in this process against this file's database (see runHere). */
const admin = (...args: ReadonlyArray<string>) =>
  Effect.flatMap(testDatabaseUrl, (url) => runHere(args, { DATABASE_URL: url }))

const jsonOf = (run: Run) => {
  expect(run.stderr === "" || run.code === 0 ? run.code : run.stderr).toBe(0)
  return JSON.parse(run.stdout)
}

const token = (clientId: string, clientSecret: string) =>
  issueToken({ client_id: clientId, client_secret: clientSecret }, { ttlSeconds: 60 }).pipe(Effect.either)

layer(testDatabase({ poolSize: 2 }), { timeout: "120 seconds", excludeTestServices: true })(
  "The admin CLI",
  (it) => {
    it.effect(
      "creates, lists and shows partners, for people and as JSON",
      () =>
        Effect.gen(function* () {
          const [human, json] = yield* Effect.all(
            [
              admin("partners", "create", "--name", "Acme Rewards"),
              admin("partners", "create", "--name", "Globex", "--json"),
            ],
            { concurrency: 2 },
          )
          expect(human.code).toBe(0)
          expect(human.stdout).toMatch(/^Partner created\n {2}id +[0-9a-f-]{36}\n {2}name +Acme Rewards\n/)
          const globex = jsonOf(json)
          expect(globex).toMatchObject({
            name: "Globex",
            id: expect.any(String),
            created_at: expect.any(String),
          })

          const [list, show] = yield* Effect.all(
            [admin("partners", "list", "--json"), admin("partners", "show", globex.id)],
            { concurrency: 2 },
          )
          const names = jsonOf(list).data.map((partner: { name: string }) => partner.name)
          expect(names).toEqual(expect.arrayContaining(["Acme Rewards", "Globex"]))
          expect(show.code).toBe(0)
          expect(show.stdout).toContain(`id          ${globex.id}`)
          expect(show.stdout).toContain("name        Globex")
        }),
      180_000,
    )

    it.effect(
      "issues a secret once that then gets a token; rotation keeps the old one for the grace period; revoke ends both",
      () =>
        Effect.gen(function* () {
          const partner = jsonOf(yield* admin("partners", "create", "--name", "Initech", "--json"))
          const created = yield* admin("credentials", "create", partner.id, "--name", "billing", "--json")
          const credential = jsonOf(created)
          expect(credential.client_secret).toMatch(/^pos_cs_/)
          expect(created.stderr).toContain("cannot be shown again")
          const first = yield* token(credential.client_id, credential.client_secret)
          expect(first._tag).toBe("Right")

          const tooLong = yield* admin(
            "credentials",
            "rotate",
            partner.id,
            credential.client_id,
            "--grace-seconds",
            "2592001",
          )
          expect(tooLong.code).toBe(1)
          expect(tooLong.stderr).toContain("grace-seconds must be an integer from 0 to 2592000")
          const rotated = yield* admin("credentials", "rotate", partner.id, credential.client_id)
          expect(rotated.code).toBe(0)
          expect(rotated.stdout).toContain("cannot be shown again")
          expect(rotated.stdout).toMatch(
            /keeps working for 86400 seconds, until \d{4}-\d{2}-\d{2}T[\d:.]+Z; tokens already issued, until they expire/,
          )
          const secret = /client_secret +(pos_cs_\S+)/.exec(rotated.stdout)?.[1] ?? ""
          expect(secret).not.toBe(credential.client_secret)
          expect((yield* token(credential.client_id, secret))._tag).toBe("Right")
          expect((yield* token(credential.client_id, credential.client_secret))._tag).toBe("Right")

          const listed = yield* admin("credentials", "list", partner.id)
          expect(listed.code).toBe(0)
          // The replaced secret's grace period shows, until when it still gets tokens.
          const until = /until (\d{4}-\d{2}-\d{2}T[\d:.]+Z)/.exec(rotated.stdout)?.[1] ?? "none"
          expect(listed.stdout).toContain("PREVIOUS_SECRET_VALID_UNTIL")
          expect(listed.stdout).toMatch(new RegExp(`${credential.client_id} +billing +active +${until}`))
          expect(listed.stdout).not.toContain("pos_cs_")

          const revoked = jsonOf(
            yield* admin("credentials", "revoke", partner.id, credential.client_id, "--json"),
          )
          expect(revoked).toMatchObject({ client_id: credential.client_id, status: "revoked" })
          const refused = yield* token(credential.client_id, secret)
          expect(refused._tag === "Left" && refused.left._tag).toBe("InvalidClientCredentials")
          const again = yield* admin("credentials", "revoke", partner.id, credential.client_id)
          expect(again.code).toBe(1)
          expect(again.stderr).toContain("Error LE0004:")
        }),
      180_000,
    )

    it.effect(
      "prints a domain error's code and message and exits non-zero; a wrong command line is a usage error",
      () =>
        Effect.gen(function* () {
          const [show, issue, empty, missing] = yield* Effect.all(
            [
              adminProcess("partners", "show", "not-a-partner"),
              adminProcess("credentials", "create", "01a1fd80-2872-72e3-8c4f-63f7fa2f1ae5", "--json"),
              adminProcess("partners", "create", "--name", ""),
              adminProcess("partners", "create"),
            ],
            { concurrency: 2 },
          )
          expect(show).toMatchObject({ code: 1, stdout: "" })
          expect(show.stderr.trim()).toBe("Error LE0002: partner not found")
          expect(issue.code).toBe(1)
          // The published error body: each entry with its id.
          expect(JSON.parse(issue.stderr)).toEqual({
            errors: [
              { id: expect.stringMatching(/^[0-9a-f-]{36}$/), code: "LE0002", message: "partner not found" },
            ],
          })
          expect(empty.code).toBe(1)
          expect(empty.stderr.trim()).toBe("Error GH1006: name must not be empty")
          expect(missing.code).toBe(2)
        }),
      180_000,
    )

    it.effect(
      "says in one line that stdout could not be written, exits 1, and keeps what the command did",
      () =>
        Effect.gen(function* () {
          const partner = jsonOf(yield* admin("partners", "create", "--name", "Full Disk", "--json"))
          const [human, json, read] = yield* Effect.all(
            [
              adminProcessOnFullDisk("credentials", "create", partner.id, "--name", "lost"),
              adminProcessOnFullDisk("credentials", "create", partner.id, "--name", "lost too", "--json"),
              adminProcessOnFullDisk("partners", "show", partner.id),
            ],
            { concurrency: 3 },
          )
          const done = "stdout could not be written (ENOSPC): what the command did is done"
          const message = `${done}; the client secret it issued was not shown and cannot be, so rotate that credential for a new one`
          // A command that issued no secret says only what it can.
          expect(read).toEqual({ code: 1, stderr: `Error OUTPUT_FAILED: ${done}\n` })
          expect(human.code).toBe(1)
          // One line, no stack trace (the secret's note went to stdout, which is gone).
          expect(human.stderr.trim()).toBe(`Error OUTPUT_FAILED: ${message}`)
          expect(json.code).toBe(1)
          expect(JSON.parse(json.stderr.slice(json.stderr.indexOf("{")))).toEqual({
            errors: [{ id: expect.stringMatching(/^[0-9a-f-]{36}$/), code: "OUTPUT_FAILED", message }],
          })
          // Both credentials exist, as the line says: rotating one gives a secret that works.
          const listed = jsonOf(yield* admin("credentials", "list", partner.id, "--json"))
          expect(listed.data.map((each: { name: string }) => each.name).sort()).toEqual(["lost", "lost too"])
          const lost = listed.data.find((each: { name: string }) => each.name === "lost")
          const rotated = jsonOf(
            yield* admin(
              "credentials",
              "rotate",
              partner.id,
              lost.client_id,
              "--grace-seconds",
              "0",
              "--json",
            ),
          )
          const issued = yield* token(lost.client_id, rotated.client_secret)
          expect(issued._tag).toBe("Right")
        }),
      180_000,
    )

    it.effect("prints a name recorded before names were checked with its control characters escaped", () =>
      Effect.gen(function* () {
        const partner = jsonOf(yield* admin("partners", "create", "--name", "Recorded", "--json"))
        // What a name recorded under the older rule reads back as (RecordedLabel): a line break, an escape.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE partners SET name = ${"Old\nid          0\u001b[31m"} WHERE id = ${partner.id}`
        const shown = yield* admin("partners", "show", partner.id)
        expect(shown.code).toBe(0)
        expect(shown.stdout).toMatch(/\n {2}name +Old\\u\{a\}id {10}0\\u\{1b\}\[31m\n/)
        expect(shown.stdout).not.toContain("\u001b")
        // JSON carries the name as it is, escaped as JSON escapes it.
        expect(jsonOf(yield* admin("partners", "show", partner.id, "--json")).name).toBe(
          "Old\nid          0\u001b[31m",
        )
      }),
    )

    it.effect("refuses a name with a line break, an escape or nothing visible, and creates nothing", () =>
      Effect.gen(function* () {
        const control =
          "Error GH1006: name must not contain control characters (line breaks, tabs, escapes, direction marks)"
        // A line break would print a line of its own in every listing: here, an id that is not the partner's.
        const forged = yield* admin("partners", "create", "--name", `Evil\nid          ${"0".repeat(8)}`)
        expect(forged).toMatchObject({ code: 1, stdout: "" })
        expect(forged.stderr.trim()).toBe(control)
        const blank = yield* admin("partners", "create", "--name", "   ")
        expect(blank).toMatchObject({ code: 1, stdout: "" })
        expect(blank.stderr.trim()).toBe("Error GH1006: name must not be blank")
        const partner = jsonOf(yield* admin("partners", "create", "--name", "Escapes", "--json"))
        const escaped = yield* admin("credentials", "create", partner.id, "--name", "Red\u001b[31mX")
        expect(escaped).toMatchObject({ code: 1, stdout: "" })
        expect(escaped.stderr.trim()).toBe(control)
        expect(jsonOf(yield* admin("credentials", "list", partner.id, "--json")).data).toEqual([])
        const partners = jsonOf(yield* admin("partners", "list", "--json", "--limit", "100"))
        expect(partners.next_cursor).toBeNull()
        expect(
          partners.data.filter(
            (each: { name: string }) => each.name.trim() === "" || each.name.startsWith("Evil"),
          ),
        ).toEqual([])
      }),
    )

    it.effect(
      "reports an unreachable database as the API does, 503's SV5003, with UUID v7 entry ids",
      () =>
        Effect.gen(function* () {
          // Nothing listens on a port just found free.
          const closed = { DATABASE_URL: `postgres://postgres@127.0.0.1:${yield* freePort}/postgres` }
          const [json, human] = yield* Effect.all(
            [runHere(["partners", "list", "--json"], closed), runHere(["partners", "list"], closed)],
            { concurrency: 2 },
          )
          expect(json.code).toBe(1)
          const [entry, ...others] = JSON.parse(json.stderr).errors
          expect(others).toEqual([])
          expect(entry).toEqual({
            id: expect.stringMatching(
              /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
            ),
            code: "SV5003",
            message: expect.stringMatching(
              /^service unavailable: retry later \(the database is out of reach: /,
            ),
          })
          expect(human.code).toBe(1)
          expect(human.stderr).toMatch(/^Error SV5003: service unavailable: retry later \(/)
        }),
      180_000,
    )

    it.effect(
      "rebuilds the read models from the log, reports events per second, and refuses a bad batch size",
      () =>
        Effect.gen(function* () {
          const partner = jsonOf(yield* admin("partners", "create", "--name", "Rebuilt Ltd", "--json"))
          const before = jsonOf(yield* admin("partners", "show", partner.id, "--json"))
          // An id in upper case names the same partner, as in the admin API.
          expect(jsonOf(yield* admin("partners", "show", partner.id.toUpperCase(), "--json"))).toEqual(before)
          const rebuilt = jsonOf(yield* admin("projections", "rebuild", "--batch-size", "2", "--json"))
          expect(rebuilt.events).toBeGreaterThanOrEqual(1)
          expect(rebuilt.rows.partners).toBeGreaterThanOrEqual(1)
          // snake_case, as every other JSON output; seconds rounded to hundredths.
          expect(rebuilt.events_per_second).toBeGreaterThan(0)
          expect(Object.keys(rebuilt)).toEqual([
            "events",
            "folded_events",
            "streams",
            "seconds",
            "events_per_second",
            "rows",
          ])
          expect(rebuilt.seconds).toBe(Math.round(rebuilt.seconds * 100) / 100)
          // The rebuilt row is the one inline projection wrote.
          expect(jsonOf(yield* admin("partners", "show", partner.id, "--json"))).toEqual(before)

          const human = yield* admin("projections", "rebuild")
          expect(human.code).toBe(0)
          expect(human.stdout).toMatch(/^Read models rebuilt\n {2}events +\d+\n/)
          expect(human.stdout).toMatch(/events_per_second +\d+/)

          const refused = yield* admin("projections", "rebuild", "--batch-size", "0")
          expect(refused.code).not.toBe(0)
          expect(refused.stderr.trim()).toBe("Error GH1006: batch-size must be an integer from 1 to 10000")
        }),
      180_000,
    )

    it.effect(
      "verifies the read models against the log: exit 0 when they match, 3 with the drifted keys when not",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          // A partner the earlier tests of this file made through the CLI.
          const [partner] = yield* sql<{
            id: string
          }>`SELECT id::text AS id FROM partners ORDER BY id LIMIT 1`
          expect(partner).toBeDefined()
          const id = partner?.id ?? ""
          const clean = jsonOf(yield* admin("projections", "verify", "--json"))
          expect(clean.consistent).toBe(true)
          expect(Object.keys(clean)).toEqual(["consistent", "events", "seconds", "tables"])
          expect(clean.tables.partners).toMatchObject({ missing: 0, unexpected: 0, examples: [] })
          expect(clean.tables.partners.expected).toBeGreaterThanOrEqual(1)

          const [original] = yield* sql<{ name: string }>`SELECT name FROM partners WHERE id = ${id}`
          yield* sql`UPDATE partners SET name = 'Tampered' WHERE id = ${id}`
          const [drifted, human] = yield* Effect.all(
            [admin("projections", "verify", "--json"), admin("projections", "verify")],
            { concurrency: "unbounded" },
          )
          yield* sql`UPDATE partners SET name = ${original?.name ?? ""} WHERE id = ${id}`
          expect(drifted.code).toBe(3)
          const figures = JSON.parse(drifted.stdout)
          expect(figures.consistent).toBe(false)
          expect(figures.tables.partners).toMatchObject({ missing: 1, unexpected: 1, examples: [id] })
          expect(human.code).toBe(3)
          expect(human.stdout).toMatch(/^Read models DIFFER from the log\n/)
          expect(human.stdout).toMatch(new RegExp(`partners +\\d+ +1 +1 +${id}`))
        }),
      180_000,
    )

    it.effect(
      "refuses to start a second embedded server on a data directory in use, and says what to do instead",
      () =>
        Effect.gen(function* () {
          const dataDir = yield* temporaryDirectory
          // PostgreSQL's lock file as a running server leaves it: this process stands in for its postmaster.
          yield* Effect.promise(async () => {
            await mkdir(join(dataDir, "postgres"))
            await writeFile(
              join(dataDir, "postgres", "postmaster.pid"),
              `${process.pid}\n${dataDir}/postgres\n1700000000\n54329\n/tmp\n127.0.0.1\n`,
            )
          })
          const run = yield* runCli(["partners", "list"], { DATABASE_URL: undefined, DATA_DIR: dataDir })
          expect(run.code).toBe(1)
          expect(run.stderr).toContain("Error DATABASE_IN_USE:")
          expect(run.stderr).toContain("in use by a server no process of the platform started")
          expect(run.stderr).toContain(`its PostgreSQL server is pid ${process.pid} on 127.0.0.1:54329`)
          expect(run.stderr).toContain("stop that server")
          expect(run.stderr).toContain("DATABASE_URL=postgres://")
          expect(run.stderr).toContain("admin API")

          // A data directory with no database yet: made, and said so (a mistyped DATA_DIR is seen at once).
          // (Its parent opened to the `postgres` OS user the embedded server runs as, when run as root.)
          yield* Effect.promise(() => chmod(dataDir, 0o755))
          const fresh = join(dataDir, "fresh")
          const created = yield* runCli(["partners", "list", "--json"], {
            DATABASE_URL: undefined,
            DATA_DIR: fresh,
          })
          expect(created.code).toBe(0)
          expect(JSON.parse(created.stdout)).toEqual({ data: [], next_cursor: null })
          expect(created.stderr).toContain(`Note: no database under ${fresh} yet (DATA_DIR)`)

          // A DATA_DIR that is a file: one line saying why it cannot be used, no note, no stack.
          const file = join(dataDir, "a-file")
          yield* Effect.promise(() => writeFile(file, "not a directory"))
          const refused = yield* runCli(["partners", "list"], { DATABASE_URL: undefined, DATA_DIR: file })
          expect(refused.code).toBe(1)
          expect(refused.stderr.trim().split("\n")).toHaveLength(1)
          expect(refused.stderr).toContain(
            `Error SV5003: service unavailable: retry later (DATA_DIR (${file}) cannot be used: `,
          )
          expect(refused.stderr).toContain("; set DATABASE_URL to use another server")
          expect(refused.stderr).not.toContain("Note:")
        }).pipe(Effect.scoped),
      180_000,
    )

    it.effect(
      "names the live process whose server holds its data directory, and stops one that a killed process left",
      () =>
        Effect.gen(function* () {
          const dataDir = yield* temporaryDirectory
          yield* Effect.promise(() => chmod(dataDir, 0o755))
          yield* startEmbeddedServer(dataDir)
          const left = postmasterOf(dataDir)
          // While its starter (this test's process) lives, the CLI refuses it, naming that process to stop.
          const refused = yield* runCli(["partners", "list"], { DATABASE_URL: undefined, DATA_DIR: dataDir })
          expect(refused.code).toBe(1)
          expect(refused.stderr).toContain(`is in use by process ${process.pid}, probably \`npm start\``)
          expect(refused.stderr).toContain(`its PostgreSQL server is pid ${left} on 127.0.0.1:`)
          expect(refused.stderr).toContain(`stop process ${process.pid} (not the server`)
          // Its owner record as a process killed alone leaves it: the process gone, its server running.
          const ownerFile = join(dataDir, "postgres.owner")
          const gone = spawnSync(process.execPath, ["-e", ""]).pid
          const owner = JSON.parse(yield* Effect.promise(() => readFile(ownerFile, "utf8")))
          yield* Effect.promise(() => writeFile(ownerFile, JSON.stringify({ ...owner, pid: gone })))
          const run = yield* runCli(["partners", "list", "--json"], {
            DATABASE_URL: undefined,
            DATA_DIR: dataDir,
          })
          expect(run.code).toBe(0)
          expect(JSON.parse(run.stdout)).toEqual({ data: [], next_cursor: null })
          expect(run.stderr).toContain(`stopping the embedded PostgreSQL (process ${left})`)
          expect(run.stderr).not.toContain("DATABASE_IN_USE")
          expect(processAlive(left)).toBe(false)
        }).pipe(Effect.scoped),
      180_000,
    )
  },
)

// The postmaster's pid: line 1 of PostgreSQL's lock file in the data directory.
const postmasterOf = (dataDir: string) =>
  Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0])

// A DATA_DIR of one test's own, removed with its scope.
const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "points-cli-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
)
