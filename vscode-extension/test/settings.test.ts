import { strict as assert } from "node:assert";
import { test } from "node:test";
import { DEFAULTS, expandFolder, readSettings, serverLaunch, serverSettings } from "../src/settings";

const from = (values: Record<string, unknown>) => (key: string) => values[key];

test("defaults when nothing is set", () => {
  const { settings, problems } = readSettings(from({}));
  assert.deepEqual(settings, DEFAULTS);
  assert.deepEqual(problems, []);
});

test("bad values fall back to defaults and are named", () => {
  const { settings, problems } = readSettings(
    from({ timeout: -1, passes: ["cpu", "gpu"], minShare: 2, top: 1.5, serverSource: "pip", interpreter: "  /x/python " }),
  );
  assert.equal(settings.timeout, 600);
  assert.deepEqual(settings.passes, []);
  assert.equal(settings.minShare, 0.05);
  assert.equal(settings.top, 3);
  assert.equal(settings.serverSource, "bundled");
  assert.equal(settings.interpreter, "/x/python");
  assert.equal(problems.length, 5);
  assert.match(problems.join("\n"), /bottleneck\.passes: \["cpu","gpu"\] is not valid/);
});

test("server settings use the server's camelCase keys and the chosen interpreter", () => {
  const { settings } = readSettings(from({ passes: ["cpu"], cwd: "${workspaceFolder}/runs", args: ["--steps", "3"] }));
  const sent = serverSettings(settings, "/venv/bin/python", "/work/project");
  assert.deepEqual(sent, {
    python: "/venv/bin/python",
    args: ["--steps", "3"],
    cwd: "/work/project/runs",
    passes: ["cpu"],
    timeout: 600,
    minShare: 0.05,
    warningShare: 0.2,
    top: 3,
    codeLens: true,
    exactLines: true,
    eventBudget: 250000,
  });
  const empty = serverSettings(DEFAULTS, "python3", undefined);
  assert.equal(empty.cwd, null);
  assert.equal(empty.passes, null);
});

test("expandFolder", () => {
  assert.equal(expandFolder("${workspaceFolderBasename}-${workspaceFolder}", "/a/b"), "b-/a/b");
  assert.equal(expandFolder("${workspaceFolder}/x", undefined), "${workspaceFolder}/x");
});

test("the bundled server puts its libraries on sys.path through the launcher flag", () => {
  assert.deepEqual(serverLaunch("/py", "/ext", "bundled"), { command: "/py", args: ["/ext/bundled/tool/serve.py", "--bundled"] });
  assert.deepEqual(serverLaunch("/py", "/ext", "environment"), { command: "/py", args: ["/ext/bundled/tool/serve.py"] });
});
