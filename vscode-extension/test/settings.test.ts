import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  BOUNDS,
  DEFAULTS,
  ENUMS,
  expandFolder,
  type ExtensionSettings,
  KEYS,
  MANIFEST_PROPERTIES,
  readSettings,
  SECTION,
  serverLaunch,
  serverSettings,
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

// package.json is the one place for defaults: settings.ts reads them from it. These tests fail
// if the two drift apart (a setting one of them lacks, a default settings.ts would reject, an
// enum that differs).
test("settings.ts and package.json agree on the settings, their defaults and enums", () => {
  const declared = Object.keys(MANIFEST_PROPERTIES)
    .filter((id) => id !== `${SECTION}.trace.server`) // read by vscode-languageclient itself
    .sort();
  assert.deepEqual(declared, KEYS.map((key) => `${SECTION}.${key}`).sort());
  for (const key of KEYS) {
    const manifestDefault = MANIFEST_PROPERTIES[`${SECTION}.${key}`]?.default;
    assert.deepEqual(DEFAULTS[key], manifestDefault, key);
    // What config.get returns for an unset key (package.json's default) is accepted as is.
    const { settings, problems } = readSettings(from({ [key]: manifestDefault }));
    assert.deepEqual(problems, [], key);
    assert.deepEqual(settings[key], manifestDefault, key);
  }
  assert.deepEqual(MANIFEST_PROPERTIES[`${SECTION}.serverSource`]?.enum, [...ENUMS.serverSource]);
  assert.deepEqual(MANIFEST_PROPERTIES[`${SECTION}.passes`]?.items?.enum, [...ENUMS.passes]);
  for (const [key, bounds] of Object.entries(BOUNDS)) {
    const declaredBounds = MANIFEST_PROPERTIES[`${SECTION}.${key}`];
    assert.deepEqual({ minimum: declaredBounds?.minimum, maximum: declaredBounds?.maximum }, bounds, key);
  }
});

test("per-folder settings are resource-scoped, server-wide ones window-scoped", () => {
  // The per-folder ones travel with each profile request (profileRequest); the others go to
  // the one server for the whole window (serverSettings), so a folder value could not apply.
  const perFolder: (keyof ExtensionSettings)[] = [
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
    assert.equal(scope, perFolder.includes(key) ? "resource" : "window", key);
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
  assert.deepEqual(serverLaunch("/py", "/ext", "bundled"), { command: "/py", args: ["/ext/bundled/tool/serve.py", "--bundled"] });
  assert.deepEqual(serverLaunch("/py", "/ext", "environment"), { command: "/py", args: ["/ext/bundled/tool/serve.py"] });
});
