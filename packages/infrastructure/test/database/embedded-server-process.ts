// A process that starts the embedded server on DATA_DIR and holds it until it is killed: for the test of a
// start after such a process was killed (SIGKILL, so that nothing stops its server).
// Run with `node --conditions=@points/source --import tsx test/database/embedded-server-process.ts`.
import { Effect } from "effect"
import { startEmbeddedServer } from "../../src/index.js"

const dataDir = process.env.DATA_DIR
if (dataDir === undefined) throw new Error("DATA_DIR is required")

await Effect.runPromise(
  Effect.scoped(
    Effect.zipRight(
      startEmbeddedServer(dataDir),
      Effect.zipRight(
        Effect.sync(() => process.stdout.write("ready\n")),
        Effect.never,
      ),
    ),
  ),
)
