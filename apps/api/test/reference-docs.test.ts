import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import { DOCS_PATH, referenceDocsRoute } from "../src/http/reference-docs.js"

it.scoped("tries the reference's module again after a load that failed, then keeps the page it made", () =>
  Effect.gen(function* () {
    let loads = 0
    const loadScalar = () => {
      loads++
      return loads === 1
        ? Promise.reject(new Error("the module could not be read"))
        : // biome-ignore lint/style/noRestrictedImports: the module the server loads on demand, loaded so here
          import("@effect/platform/HttpApiScalar")
    }
    const context = yield* Layer.build(
      Layer.provideMerge(
        HttpApiBuilder.Router.use((router) => referenceDocsRoute(router, loadScalar)),
        HttpApiBuilder.Router.Live,
      ),
    )
    const router = yield* Context.get(context, HttpApiBuilder.Router).router
    const get = router.pipe(
      Effect.provideService(
        HttpServerRequest.HttpServerRequest,
        HttpServerRequest.fromWeb(new Request(`http://localhost${DOCS_PATH}`)),
      ),
      Effect.provide(NodeHttpServer.layerContext),
      Effect.scoped,
      Effect.exit,
    )
    const failed = yield* get
    expect(Exit.isFailure(failed)).toBe(true)
    const served = yield* get
    expect(Exit.isSuccess(served) && served.value.status).toBe(200)
    expect(yield* get).toEqual(served)
    expect(loads).toBe(2)
  }),
)
