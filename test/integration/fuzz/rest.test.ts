/**
 * Property-based fuzzing of every REST route that takes a JSON body, against the real server.
 * The routes come from the served OpenAPI document (`/api/openapi.json`), so a new route with a
 * body is fuzzed without touching this file.
 *
 * With a valid token and path ids the caller owns, every request here is invalid by construction:
 * a body that breaks the route's documented schema (wrong top-level type, one property of the
 * wrong type or length, a missing required property, an unknown property where none are
 * allowed), malformed JSON, a body that is not JSON (other content types), an unsupported charset
 * or content encoding, or a body over the size limit. Every answer must be the documented error
 * body `{ error: { code, message, details? } }` with a 4xx status matching its code (never a
 * 2xx, never a 500, never a stack), and no row of any table may change. The server logs no error
 * and the process sees no uncaught exception or unhandled rejection.
 *
 * Seeded (FUZZ_SEED) and bounded; see test/helpers/fuzz.ts.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { loadConfig } from "../../../src/config.js";
import { ERROR_CODES } from "../../../src/http/errors.js";
import { startServer, type GameServer } from "../../../src/server/server.js";
import { tokenFor } from "../../helpers/clients.js";
import { check, FUZZ_SEED, hostileString, hostileValue, PROTO_KEYS, processFaults, recordingLogger, storedEverything } from "../../helpers/fuzz.js";
import { TEST_ENV } from "../../helpers/server.js";
import { pgliteStorage } from "../../helpers/storage.js";

/** The JSON Schema subset the document uses for bodies. */
interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  minLength?: number;
  maxLength?: number;
  $ref?: string;
  [k: string]: unknown;
}

interface BodyRoute {
  method: string;
  /** Path template from the document, e.g. /api/character/{characterId}. */
  template: string;
  schema: JsonSchema;
}

/** A request the fuzzer sends: the body as raw text with its headers. */
interface RawRequest {
  what: string;
  body: string;
  headers: Record<string, string>;
}

const JSON_TYPES = ["string", "number", "boolean", "object", "array", "null"] as const;

/** The JSON type of a value (integers are numbers). */
const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

describe("fuzz: REST bodies from the OpenAPI document", function () {
  this.timeout(180_000);
  let server: GameServer;
  const recorder = recordingLogger();
  let crash: ReturnType<typeof processFaults>;
  let routes: BodyRoute[] = [];
  const me = tokenFor();
  let characterId = "";

  const request = (method: string, path: string, body: string | undefined, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method: method.toUpperCase(), headers: { authorization: `Bearer ${me.token}`, ...headers }, body });

  before(async function () {
    // Start-up (PGlite, content) is most of this suite's time on a busy machine.
    this.timeout(300_000);
    crash = processFaults();
    const config = loadConfig({ ...TEST_ENV, DISABLE_RATE_LIMIT: "true" });
    server = await startServer(config, { storage: await pgliteStorage(), port: 0, host: "127.0.0.1", logger: recorder.logger });
    // The caller owns one character, flagged as an agent so the agent routes reach their body check.
    const created = await request("post", "/api/character", JSON.stringify({ name: `Fz${Date.now() % 1_000_000}` }), { "content-type": "application/json" });
    assert.equal(created.status, 201, await created.clone().text());
    characterId = ((await created.json()) as { id: string }).id;
    const flagged = await request("post", `/api/character/${characterId}/agent`, JSON.stringify({ isAgent: true }), { "content-type": "application/json" });
    assert.equal(flagged.status, 200, await flagged.clone().text());

    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }>>;
      components?: { schemas?: Record<string, JsonSchema> };
    };
    const resolve = (s: JsonSchema): JsonSchema => {
      if (!s.$ref) return s;
      const name = s.$ref.replace("#/components/schemas/", "");
      const target = doc.components?.schemas?.[name];
      assert.ok(target, `the document defines ${s.$ref}`);
      return resolve(target);
    };
    for (const [template, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        const schema = op.requestBody?.content?.["application/json"]?.schema;
        if (schema && ["post", "put", "patch"].includes(method)) routes.push({ method, template, schema: resolve(schema) });
      }
    routes = routes.sort((a, b) => `${a.template} ${a.method}`.localeCompare(`${b.template} ${b.method}`));
    console.log(`      fuzz seed ${FUZZ_SEED} (set FUZZ_SEED to replay another); ${routes.length} routes with a JSON body`);
  });
  after(async () => {
    crash?.stop();
    await server?.close();
  });
  afterEach(() => {
    assert.deepEqual(crash.faults, [], "no uncaught exception or unhandled rejection");
    assert.deepEqual(
      recorder.errors.map((e) => `${e.msg} ${JSON.stringify(e.err ?? "")}`),
      [],
      "the server logged no error",
    );
  });

  /** The concrete path: the caller's own character for character and agent ids, a random id elsewhere. */
  const pathOf = (template: string) => template.replace(/\{(\w+)\}/g, (_, name: string) => (/^(characterId|agentId)$/.test(name) ? characterId : randomUUID()));

  /** An answer is the documented error body with a 4xx status that matches its code, and no internals. */
  const assertRefusal = async (res: Response, what: string, statuses?: number[]) => {
    const text = await res.text();
    const where = `${what} → ${res.status} ${text.slice(0, 300)}`;
    assert.ok(res.status >= 400 && res.status < 500, `a 4xx refusal: ${where}`);
    if (statuses) assert.ok(statuses.includes(res.status), `status in ${statuses}: ${where}`);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/, where);
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    assert.deepEqual(Object.keys(body), ["error"], where);
    const { code, message, details } = body.error ?? {};
    assert.equal(typeof code, "string", where);
    assert.equal(typeof message, "string", where);
    assert.equal(ERROR_CODES[code as keyof typeof ERROR_CODES], res.status, `the code matches the status: ${where}`);
    assert.ok(
      Object.keys(body.error!).every((k) => ["code", "message", "details"].includes(k)),
      where,
    );
    if (details !== undefined) {
      assert.ok(Array.isArray(details), where);
      for (const d of details as { field?: unknown; message?: unknown }[]) {
        assert.equal(typeof d.field, "string", where);
        assert.equal(typeof d.message, "string", where);
      }
    }
    assert.doesNotMatch(text, /\n\s+at |node_modules|\.[cm]?[jt]s:\d+/, `no stack or file names: ${where}`);
  };

  /** Send one request and check the refusal and that no stored row changed. */
  const refusedRequest = async (route: BodyRoute, req: RawRequest, statuses?: number[]) => {
    const before = await storedEverything(server.storage);
    const res = await request(route.method, pathOf(route.template), req.body, req.headers);
    await assertRefusal(res, `${route.method.toUpperCase()} ${route.template} (${req.what})`, statuses);
    assert.deepEqual(await storedEverything(server.storage), before, "no stored row changed");
    assert.deepEqual(crash.faults, []);
    assert.deepEqual(recorder.errors, []);
  };

  // ------------------------------------------------------------------ bodies against the schema

  /** A value that is not of any of the given JSON types. */
  const notOfType = (types: string[]) =>
    hostileValue().filter((v) => {
      const t = jsonType(v);
      return !types.includes(t) && !(t === "number" && types.includes("integer"));
    });

  /** Values that break one property's schema: its type, or its length bounds. */
  const breaking = (p: JsonSchema): fc.Arbitrary<unknown> => {
    const types = p.type === undefined ? [...JSON_TYPES] : Array.isArray(p.type) ? p.type : [p.type];
    const options: fc.Arbitrary<unknown>[] = [];
    if (types.length < JSON_TYPES.length) options.push(notOfType(types));
    if (typeof p.maxLength === "number") options.push(fc.integer({ min: p.maxLength + 1, max: p.maxLength + 2_000 }).map((n) => "y".repeat(n)));
    if (typeof p.minLength === "number" && p.minLength > 0) options.push(fc.constant(""));
    if (options.length === 0) options.push(fc.constant(undefined));
    return fc.oneof(...options);
  };

  /** Bodies that no reading of the route's schema accepts. */
  const invalidBody = (schema: JsonSchema): fc.Arbitrary<{ what: string; value: unknown }> => {
    const props = schema.properties ?? {};
    const names = Object.keys(props);
    const options: fc.Arbitrary<{ what: string; value: unknown }>[] = [notOfType(["object"]).map((value) => ({ what: "not an object", value }))];
    const breakable = names.filter((n) => props[n]!.type !== undefined || props[n]!.maxLength !== undefined || props[n]!.minLength);
    if (breakable.length > 0)
      options.push(
        fc
          .constantFrom(...breakable)
          .chain((n) => breaking(props[n]!).map((v) => ({ n, v })))
          .filter(({ v }) => v !== undefined)
          .map(({ n, v }) => ({ what: `property ${n} broken`, value: { [n]: v } })),
      );
    if (schema.required?.length)
      options.push(
        hostileString
          .filter((k) => !schema.required!.includes(k) && !names.includes(k))
          .map((k) => ({ what: "required property missing", value: schema.additionalProperties === false ? {} : { [k]: 1 } })),
      );
    if (schema.additionalProperties === false)
      options.push(
        fc
          .tuple(
            fc.oneof(fc.constantFrom(...PROTO_KEYS), hostileString).filter((k) => !names.includes(k)),
            hostileValue(),
          )
          .map(([k, v]) => {
            const o: Record<string, unknown> = {};
            Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
            return { what: `unknown property ${JSON.stringify(k).slice(0, 40)}`, value: o };
          }),
      );
    return fc.oneof(...options);
  };

  describe("regressions found by the fuzzer", () => {
    // A body sent with another content type was never parsed and the route validated `{}` instead:
    // routes whose fields are all optional then ran (a new anonymous account, an agent flag set to
    // its default `true`) although the client's body was never read.
    it("a body that is not JSON (other content type) is 400 INVALID_REQUEST and changes nothing", async () => {
      const anon = routes.find((r) => r.template === "/api/auth/anonymous")!;
      const flag = routes.find((r) => r.template === "/api/character/{characterId}/agent")!;
      for (const [route, body] of [
        [anon, "{}"],
        [flag, JSON.stringify({ isAgent: false })],
      ] as const)
        for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
          await refusedRequest(route, { what: type, body, headers: { "content-type": type } }, [400]);
        }
      // A request without a body still reads as an empty JSON object.
      const res = await request("post", `/api/character/${characterId}/agent`, undefined);
      assert.equal(res.status, 200, await res.text());
    });
  });

  it("every route with a JSON body is found in the document", () => {
    assert.ok(routes.length >= 10, `${routes.length} routes`);
    for (const r of ["post /api/character", "patch /api/character/{characterId}", "post /api/agents/{agentId}/goal"])
      assert.ok(
        routes.some((x) => `${x.method} ${x.template}` === r),
        `${r} is fuzzed`,
      );
  });

  it("a body that breaks the route's schema is 400 with the error body and changes nothing", async () => {
    for (const [i, route] of routes.entries()) {
      await check(
        fc.asyncProperty(invalidBody(route.schema), async ({ what, value }) => {
          const body = JSON.stringify(value);
          await refusedRequest(route, { what: `${what}: ${body.slice(0, 80)}`, body, headers: { "content-type": "application/json" } }, [400]);
        }),
        10,
        6000 + i,
      );
    }
  });

  it("malformed JSON, other content types, bad charsets and encodings, huge bodies: documented 4xx, nothing changes", async () => {
    // Text that JSON.parse refuses (express's strict parser refuses top-level primitives too).
    const malformed = fc.oneof(
      fc.string({ unit: "binary", maxLength: 100 }).filter((s) => {
        try {
          JSON.parse(s);
          return false;
        } catch {
          return true;
        }
      }),
      fc.constantFrom("{", '{"name":', "[1,", "{'a':1}", '{"a":1}}', "NaN", "undefined", '{"a":01}', "\u0000", '{"__proto__":'),
    );
    // A JSON text (possibly a perfectly valid body) sent as something other than JSON.
    const jsonText = fc.oneof(
      hostileValue().map((v) => JSON.stringify(v ?? null)),
      fc.constantFrom("{}", '{"isAgent":false}', '{"name":"Fuzzy"}', '{"text":"hi"}', '{"type":"idle"}'),
    );
    const raw: fc.Arbitrary<{ req: RawRequest; statuses?: number[] }> = fc.oneof(
      malformed.map((body) => ({ req: { what: "malformed JSON", body, headers: { "content-type": "application/json" } }, statuses: [400] })),
      fc
        .tuple(
          jsonText,
          fc.constantFrom(
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/xml",
            "application/octet-stream",
            "text/json",
            "application/jsonx",
          ),
        )
        .map(([body, type]) => ({ req: { what: `content-type ${type}`, body, headers: { "content-type": type } }, statuses: [400] })),
      fc
        .tuple(jsonText, fc.constantFrom("utf-7", "latin1", "ebcdic", "x-unknown", ""))
        .map(([body, charset]) => ({ req: { what: `charset ${charset}`, body, headers: { "content-type": `application/json; charset=${charset}` } } })),
      fc
        .tuple(jsonText, fc.constantFrom("gzip", "deflate", "br", "x-custom", "gzip, gzip"))
        .map(([body, enc]) => ({ req: { what: `content-encoding ${enc}`, body, headers: { "content-type": "application/json", "content-encoding": enc } } })),
      fc.integer({ min: 65 * 1024, max: 300 * 1024 }).map((n) => ({
        req: { what: `${n}-byte body`, body: JSON.stringify({ name: "z".repeat(n) }), headers: { "content-type": "application/json" } },
        statuses: [413],
      })),
    );
    for (const [i, route] of routes.entries()) {
      await check(
        fc.asyncProperty(raw, async ({ req, statuses }) => refusedRequest(route, req, statuses)),
        8,
        7000 + i,
      );
    }
  });
});
