// The wire format: the exact JSON the server receives, server-wide (initializationOptions and
// workspace/didChangeConfiguration) and with each bottleneck.profile request. The expected
// objects are literal (not built from package.json or settings.ts), and compared both as
// values and as JSON text, so that a refactoring of how they are built cannot change a key,
// a value or the keys' order unnoticed.
import { strict as assert } from "node:assert";
import { test } from "node:test";
import { profileRequest, readSettings, serverSettings } from "../src/settings";

const from = (values: Record<string, unknown>) => (key: string) => values[key];

function same(actual: unknown, expected: unknown): void {
  assert.deepStrictEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
}

// Every setting away from its default (the window's values, or one folder's).
const custom: Record<string, unknown> = {
  interpreter: " /ws/a/.venv/bin/python ",
  serverSource: "environment",
  args: ["--steps", "3"],
  cwd: "${workspaceFolder}/runs",
  passes: ["sample", "cuda", "memory"],
  timeout: 30,
  duration: 45.5,
  nprocPerNode: 4,
  torchrunArgs: ["--nnodes", "2", "--node-rank", "0"],
  collectiveSizes: true,
  minShare: 0.1,
  warningShare: 0.5,
  memoryShare: 0.25,
  top: 7,
  codeLens: false,
  exactLines: false,
  separateRuns: true,
  separateCProfile: true,
  eventBudget: 0,
  fork: false,
  keepWarm: false,
  warmIdleMinutes: 2.5,
  "trace.server": "verbose",
};

test("wire: server-wide settings for package.json's defaults", () => {
  const { settings, problems } = readSettings(from({}));
  assert.deepEqual(problems, []);
  same(serverSettings(settings, "/usr/bin/python3"), {
    python: "/usr/bin/python3",
    args: [],
    cwd: null,
    passes: null,
    timeout: 600,
    duration: 0,
    nprocPerNode: 1,
    torchrunArgs: [],
    collectiveSizes: false,
    minShare: 0.05,
    warningShare: 0.2,
    memoryShare: 0.1,
    top: 3,
    codeLens: true,
    exactLines: true,
    separateRuns: false,
    separateCProfile: false,
    eventBudget: 250000,
    fork: true,
    keepWarm: true,
    warmIdleMinutes: 15,
  });
});

test("wire: server-wide settings for custom values", () => {
  const { settings, problems } = readSettings(from(custom));
  assert.deepEqual(problems, []);
  same(serverSettings(settings, "/ws/a/.venv/bin/python"), {
    python: "/ws/a/.venv/bin/python",
    // per folder: neutral, whatever the window says (each request carries its folder's)
    args: [],
    cwd: null,
    passes: null,
    // per folder, but the window's values stand in for requests that name none
    timeout: 30,
    duration: 45.5,
    nprocPerNode: 4,
    torchrunArgs: ["--nnodes", "2", "--node-rank", "0"],
    collectiveSizes: true,
    minShare: 0.1,
    warningShare: 0.5,
    memoryShare: 0.25,
    top: 7,
    codeLens: false,
    exactLines: false,
    separateRuns: true,
    separateCProfile: true,
    eventBudget: 0,
    fork: false,
    keepWarm: false,
    warmIdleMinutes: 2.5,
  });
});

test("wire: a profile request for package.json's defaults", () => {
  const { settings } = readSettings(from({}));
  same(profileRequest("file:///ws/a/train.py", settings, "/usr/bin/python3", "/ws/a"), {
    uri: "file:///ws/a/train.py",
    args: [],
    python: "/usr/bin/python3",
    timeout: 600,
    duration: 0,
    nprocPerNode: 1,
    torchrunArgs: [],
    collectiveSizes: false,
  });
  same(profileRequest("file:///tmp/x.py", settings, "/py", undefined, ["--a"]), {
    uri: "file:///tmp/x.py",
    args: ["--a"],
    python: "/py",
    timeout: 600,
    duration: 0,
    nprocPerNode: 1,
    torchrunArgs: [],
    collectiveSizes: false,
  });
});

test("wire: a profile request for a folder with custom values", () => {
  const { settings } = readSettings(from(custom));
  same(profileRequest("file:///ws/a/train.py", settings, "/ws/a/.venv/bin/python", "/ws/a"), {
    uri: "file:///ws/a/train.py",
    args: ["--steps", "3"],
    python: "/ws/a/.venv/bin/python",
    timeout: 30,
    duration: 45.5,
    nprocPerNode: 4,
    torchrunArgs: ["--nnodes", "2", "--node-rank", "0"],
    collectiveSizes: true,
    passes: ["sample", "cuda", "memory"],
    cwd: "/ws/a/runs",
  });
  // remembered arguments win over bottleneck.args; a cwd without a folder stays as written
  same(profileRequest("file:///tmp/x.py", settings, "/py", undefined, []), {
    uri: "file:///tmp/x.py",
    args: [],
    python: "/py",
    timeout: 30,
    duration: 45.5,
    nprocPerNode: 4,
    torchrunArgs: ["--nnodes", "2", "--node-rank", "0"],
    collectiveSizes: true,
    passes: ["sample", "cuda", "memory"],
    cwd: "${workspaceFolder}/runs",
  });
});

test("wire: the request's arrays are copies, not the settings' own", () => {
  const { settings } = readSettings(from(custom));
  const request = profileRequest("file:///ws/a/train.py", settings, "/py", "/ws/a");
  const server = serverSettings(settings, "/py");
  for (const sent of [request, server]) {
    for (const value of Object.values(sent)) {
      if (Array.isArray(value)) {
        assert.ok(!Object.values(settings).includes(value));
      }
    }
  }
});
