import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import { PointsApi } from "@points/http-api"
import { type Context, Duration, Effect, Fiber } from "effect"

/** Where the interactive reference of the contract is served. */
export const DOCS_PATH = "/docs"

/**
 * The contract's interactive reference at /docs: the page HttpApiScalar makes (the OpenAPI document and the
 * Scalar script inline, with the browser's fonts, so it needs nothing from outside), loaded on its first
 * request. Its module holds ~13 MB of script, which every process kept in memory from its start when it was
 * imported there; now only a process whose reference someone opened does.
 */
export const ReferenceDocsLive = HttpApiBuilder.Router.use((router) =>
  referenceDocsRoute(
    router,
    // biome-ignore lint/style/noRestrictedImports: the one place the module is loaded, on demand
    () => import("@effect/platform/HttpApiScalar"),
  ),
)

type ScalarModule = typeof import("@effect/platform/HttpApiScalar")

/** Adds the reference's route to `router`, its page made with the Scalar module that `loadScalar` loads. */
export const referenceDocsRoute = (
  router: Context.Tag.Service<HttpApiBuilder.Router>,
  loadScalar: () => Promise<Pick<ScalarModule, "layerHttpLayerRouter">>,
) =>
  Effect.gen(function* () {
    // The page is loaded by a fiber of the server's scope, not by the request that asked first: that one's
    // client may go away (interrupting it) while the others wait for the same load.
    const scope = yield* Effect.scope
    const load = Effect.promise(loadScalar).pipe(
      Effect.flatMap((scalar) =>
        HttpLayerRouter.toHttpEffect(
          // Scalar's default fonts would come from its own servers: the page uses the browser's instead.
          scalar.layerHttpLayerRouter({
            api: PointsApi,
            path: DOCS_PATH,
            scalar: { withDefaultFonts: false },
          }),
        ),
      ),
    )
    const [loading, forget] = yield* Effect.cachedInvalidateWithTTL(
      Effect.forkIn(load, scope),
      Duration.infinity,
    )
    // A load that failed is tried again by the next request instead of being served as a failure for good.
    const page = loading.pipe(
      Effect.flatMap(Fiber.join),
      Effect.tapDefect(() => forget),
    )
    yield* router.get(DOCS_PATH, Effect.flatten(page))
  })
