import { Command, Options } from "@effect/cli"
import type { PartnerResource } from "@points/domain"
import { createPartner, getPartnerResource, listPartnerResources } from "@points/infrastructure"
import { Effect, Option } from "effect"
import { cursor, json, label, limit, partnerId } from "./options.js"
import { printFields, printNextPage, printTable } from "./output.js"
import { runAdmin } from "./run-admin.js"

const partnerFields = (title: string, partner: PartnerResource) =>
  printFields(title, [
    ["id", partner.id],
    ["name", partner.name],
    ["created_at", partner.created_at],
  ])

/** `partners create --name <name>`. */
const create = Command.make(
  "create",
  { name: Options.text("name").pipe(Options.withDescription("The partner's display name.")), json },
  ({ name, json }) =>
    runAdmin(
      { json },
      Effect.flatMap(label("name", name), (valid) => createPartner({ name: valid })),
      (partner) => partnerFields("Partner created", partner),
    ),
).pipe(Command.withDescription("Register a partner (a tenant of the API)."))

/** `partners list [--limit n] [--cursor c]`. */
const list = Command.make("list", { limit, cursor, json }, ({ limit, cursor, json }) =>
  runAdmin(
    { json },
    listPartnerResources({ limit: Option.getOrUndefined(limit), cursor: Option.getOrUndefined(cursor) }),
    (page) =>
      Effect.zipRight(
        printTable(
          ["ID", "NAME", "CREATED_AT"],
          page.data.map((partner) => [partner.id, partner.name, partner.created_at]),
          "No partners.",
        ),
        printNextPage(page.next_cursor),
      ),
  ),
).pipe(Command.withDescription("List partners, oldest first."))

/** `partners show <partner_id>`. */
const show = Command.make("show", { partnerId, json }, ({ partnerId, json }) =>
  runAdmin({ json }, getPartnerResource(partnerId), (partner) => partnerFields("Partner", partner)),
).pipe(Command.withDescription("Show one partner."))

/** `partners …`: register, list and show partners. */
export const partnersCommand = Command.make("partners").pipe(
  Command.withDescription("Partners: the tenants of the API."),
  Command.withSubcommands([create, list, show]),
)
