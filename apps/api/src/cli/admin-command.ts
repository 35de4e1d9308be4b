import { Command } from "@effect/cli"
import { credentialsCommand } from "./credential-commands.js"
import { partnersCommand } from "./partner-commands.js"
import { projectionsCommand } from "./projection-commands.js"

/** The admin CLI: `admin partners …`, `admin credentials …` and `admin projections …`, straight on the database. */
export const adminCommand = Command.make("admin").pipe(
  Command.withDescription(
    "Manage partners, their client credentials and the read models directly in the database (DATABASE_URL, or the embedded server under DATA_DIR).",
  ),
  Command.withSubcommands([partnersCommand, credentialsCommand, projectionsCommand]),
)

/** Parses the command line (without node and the script) and runs the command it names. */
export const runAdminCli = Command.run(adminCommand, { name: "points admin", version: "0.1.0" })
