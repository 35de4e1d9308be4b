import { Command, Options } from "@effect/cli"
import { type CredentialResource, MAX_GRACE_PERIOD_SECONDS } from "@points/domain"
import {
  DEFAULT_SECRET_GRACE_SECONDS,
  type IssuedCredential,
  issueCredential,
  listCredentialResources,
  type RotatedCredential,
  revokeCredential,
  rotateCredentialSecret,
} from "@points/infrastructure"
import { Console, Effect, Option } from "effect"
import { clientId, cursor, gracePeriod, json, label, limit, partnerId } from "./options.js"
import { type OutputMode, printFields, printNextPage, printSecret, printTable } from "./output.js"
import { runAdmin } from "./run-admin.js"

// `created_at` is when this secret was made: for a rotation, the rotation's time (labelled so for people).
const issuedFields = (
  title: string,
  issued: IssuedCredential,
  madeAt: "created_at" | "rotated_at" = "created_at",
) =>
  printFields(title, [
    ["client_id", issued.client_id],
    ["client_secret", issued.client_secret],
    [madeAt, issued.created_at],
  ])

const printIssued = (mode: OutputMode, title: string) => (issued: IssuedCredential) =>
  printSecret(mode, issuedFields(title, issued), issued)

/** `credentials create <partner_id> [--name <name>]`. */
const create = Command.make(
  "create",
  {
    partnerId,
    name: Options.text("name").pipe(
      Options.withDescription("A label for the credential, e.g. the system that uses it."),
      Options.optional,
    ),
    json,
  },
  ({ partnerId, name, json }) => {
    const mode = { json }
    const validName = Option.match(name, {
      onNone: () => Effect.succeed(null),
      onSome: (value) => label("name", value),
    })
    const issue = Effect.flatMap(validName, (valid) => issueCredential(partnerId, { name: valid }))
    const print = printIssued(mode, `Client credential created for partner ${partnerId}`)
    return runAdmin(mode, issue, print, print)
  },
).pipe(Command.withDescription("Issue a client id and secret for a partner (the secret is shown once)."))

/** `credentials list <partner_id>`. */
const list = Command.make("list", { partnerId, limit, cursor, json }, ({ partnerId, limit, cursor, json }) =>
  runAdmin(
    { json },
    listCredentialResources(partnerId, {
      limit: Option.getOrUndefined(limit),
      cursor: Option.getOrUndefined(cursor),
    }),
    (page) =>
      Effect.zipRight(
        printTable(
          ["CLIENT_ID", "NAME", "STATUS", "PREVIOUS_SECRET_VALID_UNTIL", "CREATED_AT", "UPDATED_AT"],
          page.data.map((credential) => [
            credential.client_id,
            credential.name,
            credential.status,
            credential.previous_secret_valid_until,
            credential.created_at,
            credential.updated_at,
          ]),
          "No client credentials.",
        ),
        printNextPage(page.next_cursor),
      ),
  ),
).pipe(Command.withDescription("List a partner's client credentials (never their secrets)."))

/** `credentials rotate <partner_id> <client_id> [--grace-seconds n]`. */
const rotate = Command.make(
  "rotate",
  {
    partnerId,
    clientId,
    graceSeconds: Options.integer("grace-seconds").pipe(
      Options.withDescription(
        `How long the replaced secret keeps working, in seconds, 0 to ${MAX_GRACE_PERIOD_SECONDS} (default ${DEFAULT_SECRET_GRACE_SECONDS}; 0 stops it at once).`,
      ),
      Options.withDefault(DEFAULT_SECRET_GRACE_SECONDS),
    ),
    json,
  },
  ({ partnerId, clientId, graceSeconds, json }) => {
    const mode = { json }
    const rotation = Effect.flatMap(gracePeriod(graceSeconds), (gracePeriodSeconds) =>
      rotateCredentialSecret(partnerId, clientId, { gracePeriodSeconds }),
    )
    const human = (rotated: RotatedCredential) =>
      Effect.zipRight(
        issuedFields(`Client secret rotated for client ${clientId}`, rotated, "rotated_at"),
        Console.log(
          `The previous secret keeps working for ${graceSeconds} seconds, until ${rotated.previous_secret_valid_until}; tokens already issued, until they expire.`,
        ),
      )
    const print = (rotated: RotatedCredential) => printSecret(mode, human(rotated), rotated)
    return runAdmin(mode, rotation, print, print)
  },
).pipe(Command.withDescription("Replace a credential's secret (the new one is shown once)."))

const credentialFields = (title: string, credential: CredentialResource) =>
  printFields(title, [
    ["client_id", credential.client_id],
    ["name", credential.name],
    ["status", credential.status],
    ["previous_secret_valid_until", credential.previous_secret_valid_until],
    ["created_at", credential.created_at],
    ["updated_at", credential.updated_at],
  ])

/** `credentials revoke <partner_id> <client_id>`. */
const revoke = Command.make("revoke", { partnerId, clientId, json }, ({ partnerId, clientId, json }) =>
  runAdmin({ json }, revokeCredential(partnerId, clientId), (credential) =>
    credentialFields("Client credential revoked, with every token it held", credential),
  ),
).pipe(Command.withDescription("Revoke a credential for good, with every access token it holds."))

/** `credentials …`: issue, list, rotate and revoke a partner's client credentials. */
export const credentialsCommand = Command.make("credentials").pipe(
  Command.withDescription("Client credentials (client id and secret) of a partner."),
  Command.withSubcommands([create, list, rotate, revoke]),
)
