// Multi-root workspaces: each profile request carries the settings of the workspace folder
// that holds its script (read with getConfiguration("bottleneck", scriptUri)), never those of
// the active editor's folder or of whichever folder started the server.
import { strict as assert } from "node:assert";
import { test } from "node:test";
import { chooseInterpreter } from "../src/interpreterChoice";
import { DEFAULTS, profileRequest, readSettings, serverSettings } from "../src/settings";

// What VS Code's configuration API would give per folder: the window's (user/workspace) values,
// with the folder's own .vscode/settings.json on top.
const windowValues: Record<string, unknown> = { timeout: 120, passes: ["cpu"] };
const folders: Partial<Record<string, Record<string, unknown>>> = {
  "/ws/vision": {
    interpreter: "/ws/vision/.venv/bin/python",
    passes: ["sample", "cuda"],
    cwd: "${workspaceFolder}/runs",
    nprocPerNode: 4,
    torchrunArgs: ["--max-restarts", "1"],
    collectiveSizes: true,
  },
  "/ws/text": { passes: [], args: ["--epochs", "1"], timeout: 30, duration: 20 },
};
const configFor = (folder: string | undefined) => (key: string) =>
  folder !== undefined && key in (folders[folder] ?? {}) ? folders[folder]?.[key] : windowValues[key];

async function requestFor(script: string, folder: string | undefined, remembered?: string[]) {
  const { settings } = readSettings(configFor(folder));
  const interpreter = await chooseInterpreter(settings.interpreter, () => Promise.resolve("/usr/bin/python3.11"));
  return profileRequest(`file://${script}`, settings, interpreter.path, folder, remembered);
}

test("two folders with different passes and interpreters: each request has its own folder's", async () => {
  const vision = await requestFor("/ws/vision/train.py", "/ws/vision");
  assert.deepEqual(vision, {
    uri: "file:///ws/vision/train.py",
    args: [],
    python: "/ws/vision/.venv/bin/python", // the folder's setting wins over the Python extension
    timeout: 120, // not set in the folder: the window's value
    duration: 0, // package.json's default: the whole run
    nprocPerNode: 4, // the folder's torchrun job
    torchrunArgs: ["--max-restarts", "1"],
    collectiveSizes: true,
    passes: ["sample", "cuda"],
    cwd: "/ws/vision/runs", // ${workspaceFolder} is the script's folder
  });
  const text = await requestFor("/ws/text/train.py", "/ws/text");
  assert.deepEqual(text, {
    uri: "file:///ws/text/train.py",
    args: ["--epochs", "1"],
    python: "/usr/bin/python3.11", // no setting there: the Python extension's interpreter for it
    timeout: 30,
    duration: 20, // the folder's window
    nprocPerNode: 1, // set only in the other folder: package.json's default, a single process
    torchrunArgs: [],
    collectiveSizes: false,
    // passes: [] in the folder means every pass: no `passes`, so the server's null applies
  });
});

test("an empty per-folder value never picks up another folder's through the server", async () => {
  // The server falls back to its own settings for an absent or empty `passes`/`cwd`: those
  // are null there whichever folder's settings were read when it started.
  const { settings: started } = readSettings(configFor("/ws/vision"));
  const server = serverSettings(started, "/ws/vision/.venv/bin/python");
  assert.equal(server.passes, null);
  assert.equal(server.cwd, null);
  assert.deepEqual(server.args, []);
  const text = await requestFor("/ws/text/train.py", "/ws/text");
  assert.equal("passes" in text, false);
  assert.equal("cwd" in text, false);
});

test("remembered arguments win over the folder's bottleneck.args", async () => {
  const text = await requestFor("/ws/text/train.py", "/ws/text", ["--epochs", "5"]);
  assert.deepEqual(text.args, ["--epochs", "5"]);
  const none = await requestFor("/ws/text/train.py", "/ws/text", []);
  assert.deepEqual(none.args, []);
});

test("a script outside every folder: the window's settings, package.json's defaults for the rest", async () => {
  const loose = await requestFor("/tmp/bench.py", undefined);
  assert.deepEqual(loose, {
    uri: "file:///tmp/bench.py",
    args: DEFAULTS.args,
    python: "/usr/bin/python3.11",
    timeout: 120,
    duration: DEFAULTS.duration,
    nprocPerNode: DEFAULTS.nprocPerNode,
    torchrunArgs: DEFAULTS.torchrunArgs,
    collectiveSizes: DEFAULTS.collectiveSizes,
    passes: ["cpu"],
  });
});
