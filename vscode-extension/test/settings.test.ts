import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  CLIENT_ONLY,
  DEFAULTS,
  expandFolder,
  fits,
  KEYS,
  MANIFEST_PROPERTIES,
  profileRequest,
  PROPERTIES,
  propertiesOf,
  readSettings,
  restartsServer,
  type Schema,
  SECTION,
  serverLaunch,
  type ServerSource,
  serverSettings,
  TYPES,
} from "../src/settings";

const from = (values: Record<string, unknown>) => (key: string) => values[key];

test("defaults when nothing is set", () => {
  const { settings, problems } = readSettings(from({}));
  assert.deepEqual(settings, DEFAULTS);
  assert.deepEqual(problems, []);
});

test("bad values fall back to package.json's defaults and are named", () => {
  const { settings, problems } = readSettings(
    from({ timeout: -1, passes: ["cpu", "gpu"], minShare: 2, top: 1.5, serverSource: "pip", interpreter: "  /x/python " }),
  );
  assert.equal(settings.timeout, DEFAULTS.timeout);
  assert.deepEqual(settings.passes, DEFAULTS.passes);
  assert.equal(settings.minShare, DEFAULTS.minShare);
  assert.equal(settings.top, DEFAULTS.top);
  assert.equal(settings.serverSource, DEFAULTS.serverSource);
  assert.equal(settings.interpreter, "/x/python");
  assert.equal(problems.length, 5);
  assert.match(problems.join("\n"), /bottleneck\.passes: \["cpu","gpu"\] is not valid/);
  assert.match(problems.join("\n"), new RegExp(`bottleneck\\.timeout: -1 is not valid; using ${String(DEFAULTS.timeout)}`));

  // package.json's bounds (the server's: tests/test_settings.py), as VS Code's settings editor
  // applies them: timeout is above 0 s
  assert.deepEqual(readSettings(from({ timeout: 0 })).problems, ["bottleneck.timeout: 0 is not valid; using 600"]);
  assert.deepEqual(readSettings(from({ timeout: 0.5 })).problems, []);
});

test("nprocPerNode: an integer from 1 to 64; anything else falls back to 1 and is named", () => {
  assert.equal(DEFAULTS.nprocPerNode, 1);
  for (const good of [1, 2, 8, 64]) {
    const { settings, problems } = readSettings(from({ nprocPerNode: good }));
    assert.equal(settings.nprocPerNode, good);
    assert.deepEqual(problems, [], String(good));
  }
  for (const bad of [0, -2, 1.5, 65, "4", true, Number.NaN]) {
    const { settings, problems } = readSettings(from({ nprocPerNode: bad }));
    assert.equal(settings.nprocPerNode, DEFAULTS.nprocPerNode, String(bad));
    assert.equal(problems.length, 1, String(bad));
    assert.match(problems[0] ?? "", /^bottleneck\.nprocPerNode: .* is not valid; using 1$/, String(bad));
  }
});

// package.json is the one statement of the settings: settings.ts reads every one it declares,
// and checks each value against its schema. These tests fail if package.json declares what
// settings.ts cannot check (a default its own schema rejects, a type or keyword not checked),
// or if the few settings the extension reads itself lose the shape their types claim.
test("every setting package.json declares is read, and its default accepted as is", () => {
  assert.deepEqual(
    KEYS.map((key) => `${SECTION}.${key}`),
    Object.keys(MANIFEST_PROPERTIES),
  );
  for (const key of KEYS) {
    const manifestDefault = MANIFEST_PROPERTIES[`${SECTION}.${key}`]?.default;
    assert.notEqual(manifestDefault, undefined, key);
    assert.deepEqual(DEFAULTS[key], manifestDefault, key);
    // What config.get returns for an unset key (package.json's default) is accepted as is.
    const { settings, problems } = readSettings(from({ [key]: manifestDefault }));
    assert.deepEqual(problems, [], key);
    assert.deepEqual(settings[key], manifestDefault, key);
  }
});

test("package.json's schemas use only what settings.ts checks", () => {
  const annotations = ["description", "markdownDescription", "enumDescriptions", "markdownEnumDescriptions", "order"];
  const checked = ["type", "default", "scope", "enum", "items", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
  const known = (where: string, schema: object): void => {
    for (const [keyword, value] of Object.entries(schema)) {
      assert.ok([...checked, ...annotations].includes(keyword), `${where}: ${keyword} is not checked`);
      if (keyword === "type") {
        for (const type of [value].flat() as unknown[]) {
          assert.ok(typeof type === "string" && TYPES.includes(type), `${where}: type ${String(type)}`);
        }
      }
      if (keyword === "items") {
        known(`${where}.items`, value as object);
      }
    }
  };
  for (const { key, schema } of PROPERTIES) {
    known(key, schema);
  }
});

test("the settings the extension reads itself have the types settings.ts gives them", () => {
  const schema = (key: string) => MANIFEST_PROPERTIES[`${SECTION}.${key}`];
  for (const key of ["interpreter", "cwd"]) {
    assert.equal(schema(key)?.type, "string", key);
  }
  for (const key of ["args", "passes"]) {
    assert.equal(schema(key)?.type, "array", key);
    assert.equal(schema(key)?.items?.type, "string", key);
  }
  assert.equal(schema("serverSource")?.type, "string");
  const sources: ServerSource[] = ["bundled", "environment"];
  assert.deepEqual(schema("serverSource")?.enum, sources);
  assert.deepEqual(schema("passes")?.items?.enum, ["sample", "cprofile", "cpu", "cuda", "memory"]);
  assert.deepEqual(
    { minimum: schema("nprocPerNode")?.minimum, maximum: schema("nprocPerNode")?.maximum },
    { minimum: 1, maximum: 64 },
  );
});

test("values are checked against their schema: type, enum, items, bounds", () => {
  const cases: [Schema, unknown[], unknown[]][] = [
    [{ type: "string" }, ["", "x"], [1, true, [], {}]],
    [{ type: "boolean" }, [true, false], [0, "true", []]],
    [{ type: "number" }, [0, -1.5, 1e9], ["1", Number.NaN, Number.POSITIVE_INFINITY, true]],
    [{ type: "integer" }, [0, -3, 64], [1.5, "2", Number.NaN, Number.POSITIVE_INFINITY]],
    [{ type: "array" }, [[], [1, "a"]], ["a", {}, 0]],
    [{ type: "array", items: { type: "string" } }, [[], ["a", "b"]], [[1], ["a", null]]],
    [{ type: "array", items: { type: "string", enum: ["a", "b"] } }, [[], ["b", "a"]], [["c"], ["a", "A"]]],
    [{ type: "string", enum: ["off", "on"] }, ["off", "on"], ["OFF", "", 1]],
    [{ type: ["string", "null"] }, ["x", null], [1]],
    [{ type: "number", minimum: 0, maximum: 1 }, [0, 0.5, 1], [-0.01, 1.01]],
    [{ type: "number", exclusiveMinimum: 0 }, [0.001, 15], [0, -1]],
    [{ type: "number", exclusiveMaximum: 10 }, [9.99], [10, 11]],
    [{ type: "integer", minimum: 1, maximum: 64 }, [1, 64], [0, 65, 1.5]],
    [{}, [1, "x", null, []], []],
    [{ type: "object" }, [], [{}, "x"]], // not a type settings.ts checks: nothing fits
  ];
  for (const [schema, good, bad] of cases) {
    for (const value of good) {
      assert.equal(fits(schema, value), true, `${JSON.stringify(schema)} ${JSON.stringify(value)}`);
    }
    for (const value of bad) {
      assert.equal(fits(schema, value), false, `${JSON.stringify(schema)} ${JSON.stringify(value)}`);
    }
  }
});

test("every setting falls back to its default, named, for a value of the wrong type", () => {
  for (const { key, schema } of PROPERTIES) {
    const wrong = schema.type === "string" ? 7 : "seven";
    const { settings, problems } = readSettings(from({ [key]: wrong }));
    assert.deepEqual(settings[key], DEFAULTS[key], key);
    assert.deepEqual(
      problems,
      [`${SECTION}.${key}: ${JSON.stringify(wrong)} is not valid; using ${JSON.stringify(DEFAULTS[key])}`],
      key,
    );
  }
});

test("per-folder settings are resource-scoped, server-wide ones window-scoped", () => {
  // The per-folder ones travel with each profile request (profileRequest); the others go to
  // the one server for the whole window (serverSettings), so a folder value could not apply.
  const perFolder = [
    "interpreter",
    "args",
    "cwd",
    "passes",
    "timeout",
    "duration",
    "nprocPerNode",
    "torchrunArgs",
    "collectiveSizes",
  ];
  for (const key of KEYS) {
    const scope = MANIFEST_PROPERTIES[`${SECTION}.${key}`]?.scope;
    // trace.server: vscode-languageclient's, no scope (window)
    assert.equal(scope, perFolder.includes(key) ? "resource" : key === "trace.server" ? undefined : "window", key);
  }
});

test("server settings use the server's camelCase keys and the server's interpreter", () => {
  const { settings } = readSettings(
    from({
      passes: ["cpu"],
      cwd: "${workspaceFolder}/runs",
      args: ["--steps", "3"],
      timeout: 30,
      duration: 45,
      nprocPerNode: 4,
      torchrunArgs: ["--nnodes", "2"],
      minShare: 0.1,
      top: 5,
    }),
  );
  const sent = serverSettings(settings, "/venv/bin/python");
  assert.deepEqual(sent, {
    python: "/venv/bin/python",
    // per folder, sent with each request: neutral here so that no folder's value leaks into another's
    args: [],
    cwd: null,
    passes: null,
    timeout: 30,
    duration: 45,
    nprocPerNode: 4, // the window's values, for requests that name none (profileRequest always does)
    torchrunArgs: ["--nnodes", "2"],
    collectiveSizes: false,
    minShare: 0.1,
    warningShare: DEFAULTS.warningShare,
    memoryShare: DEFAULTS.memoryShare,
    top: 5,
    codeLens: DEFAULTS.codeLens,
    exactLines: DEFAULTS.exactLines,
    separateRuns: false,
    separateCProfile: false,
    eventBudget: DEFAULTS.eventBudget,
    fork: true,
    keepWarm: true,
    warmIdleMinutes: 15,
  });
});

test("expandFolder", () => {
  assert.equal(expandFolder("${workspaceFolderBasename}-${workspaceFolder}", "/a/b"), "b-/a/b");
  assert.equal(expandFolder("${workspaceFolder}/x", undefined), "${workspaceFolder}/x");
});

test("the bundled server puts its libraries on sys.path through the launcher flag", () => {
  assert.deepEqual(serverLaunch("/py", "/ext", { serverSource: "bundled" }), {
    command: "/py",
    args: ["/ext/bundled/tool/serve.py", "--bundled"],
    source: "bundled",
  });
  assert.deepEqual(serverLaunch("/py", "/ext", { serverSource: "environment" }), {
    command: "/py",
    args: ["/ext/bundled/tool/serve.py"],
    source: "environment",
  });
  assert.equal(serverLaunch("/py", "/ext", DEFAULTS).source, "bundled");
});

test("the extension's own settings never reach the server", () => {
  const { settings } = readSettings(
    from({ interpreter: "/x/python", serverSource: "environment", "trace.server": "verbose", cwd: "/c", passes: ["cpu"] }),
  );
  const server = serverSettings(settings, "/py");
  const request = profileRequest("file:///a.py", settings, "/py", "/a");
  for (const key of CLIENT_ONLY) {
    assert.equal(key in server, false, key);
    assert.equal(key in request, false, key);
  }
  assert.equal(request.python, "/py"); // the interpreter travels as the chosen interpreter's path
  assert.equal(server.python, "/py");
});

test("interpreter and serverSource restart the server; the others are pushed", () => {
  const affects = (changed: string) => (id: string) => id === changed;
  assert.equal(restartsServer(affects(`${SECTION}.interpreter`)), true);
  assert.equal(restartsServer(affects(`${SECTION}.serverSource`)), true);
  assert.equal(restartsServer(affects(`${SECTION}.minShare`)), false);
  assert.equal(restartsServer(affects(`${SECTION}.nprocPerNode`)), false);
});

test("a new setting needs only its package.json entry", () => {
  // package.json's properties with two settings more: one server-wide, one per folder.
  const properties = propertiesOf({
    ...MANIFEST_PROPERTIES,
    "other.setting": { type: "string", default: "x" }, // not ours: ignored
    [`${SECTION}.newWindow`]: { type: "integer", default: 2, minimum: 0, scope: "window" },
    [`${SECTION}.newFolder`]: { type: "array", items: { type: "string", enum: ["a", "b"] }, default: ["a"], scope: "resource" },
  });
  assert.deepEqual(properties.slice(-2).map(({ key }) => key), ["newWindow", "newFolder"]);
  const defaults = readSettings(from({}), properties);
  assert.deepEqual(defaults.problems, []);
  assert.equal(defaults.settings.newWindow, 2);
  const { settings, problems } = readSettings(
    from({ newWindow: -1, newFolder: ["b"], timeout: 5 }),
    properties,
  );
  assert.deepEqual(problems, [`${SECTION}.newWindow: -1 is not valid; using 2`]);
  const server = serverSettings(settings, "/py", properties);
  assert.equal(server.newWindow, 2);
  assert.deepEqual(server.newFolder, ["b"]); // the window's value, for requests that name none
  assert.equal(server.timeout, 5);
  const request = profileRequest("file:///a.py", settings, "/py", "/a", undefined, properties);
  assert.equal("newWindow" in request, false); // server-wide: not per request
  assert.deepEqual(request.newFolder, ["b"]);
  assert.equal(request.timeout, 5);
  // Without the two, the objects are those of package.json alone.
  const plain = readSettings(from({ timeout: 5 })).settings;
  const { newWindow, newFolder, ...rest } = server;
  assert.deepEqual([newWindow, newFolder], [2, ["b"]]);
  assert.deepEqual(rest, serverSettings(plain, "/py"));
});
