// The extension's settings, read and checked, and what the server gets from them: the
// server-wide settings (initializationOptions, workspace/didChangeConfiguration) and the
// per-folder ones that travel with each bottleneck.profile request.
// Pure: no vscode import, so that the unit tests run in plain Node.
//
// package.json is the one place that states the settings' defaults. The configuration API
// already applies them (config.get returns the default for an unset key); the fallbacks
// below, for a missing or invalid value, are read from the same manifest, not restated.
import { contributes } from "../package.json";

export type ServerSource = "bundled" | "environment";
export type Pass = "sample" | "cprofile" | "cpu" | "cuda" | "memory";

export interface ExtensionSettings {
  interpreter: string;
  serverSource: ServerSource;
  args: string[];
  cwd: string;
  passes: Pass[];
  timeout: number;
  duration: number;
  nprocPerNode: number;
  torchrunArgs: string[];
  collectiveSizes: boolean;
  minShare: number;
  warningShare: number;
  memoryShare: number;
  top: number;
  codeLens: boolean;
  exactLines: boolean;
  separateCProfile: boolean;
  eventBudget: number;
  fork: boolean;
  keepWarm: boolean;
  warmIdleMinutes: number;
}

export const SECTION = "bottleneck";

const PASSES: readonly Pass[] = ["sample", "cprofile", "cpu", "cuda", "memory"];
const SOURCES: readonly ServerSource[] = ["bundled", "environment"];
const NPROC = { minimum: 1, maximum: 64 } as const; // processes per node (torchrun's --nproc-per-node)

const isString = (v: unknown): v is string => typeof v === "string";
const isBool = (v: unknown): v is boolean => typeof v === "boolean";
const fraction = (v: unknown): v is number => typeof v === "number" && v >= 0 && v <= 1;
const count = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;
const positive = (v: unknown): v is number => typeof v === "number" && v > 0;
const seconds = (v: unknown): v is number => typeof v === "number" && v >= 0; // 0: none
const nproc = (v: unknown): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= NPROC.minimum && v <= NPROC.maximum;
const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const passes = (v: unknown): v is Pass[] => strings(v) && v.every((p) => (PASSES as readonly string[]).includes(p));
const source = (v: unknown): v is ServerSource => (SOURCES as readonly unknown[]).includes(v);

/** What each setting accepts (package.json's schema, as checked here). */
const VALID: { [K in keyof ExtensionSettings]: (v: unknown) => v is ExtensionSettings[K] } = {
  interpreter: isString,
  serverSource: source,
  args: strings,
  cwd: isString,
  passes,
  timeout: positive,
  duration: seconds,
  nprocPerNode: nproc,
  torchrunArgs: strings,
  collectiveSizes: isBool,
  minShare: fraction,
  warningShare: fraction,
  memoryShare: fraction,
  top: count,
  codeLens: isBool,
  exactLines: isBool,
  separateCProfile: isBool,
  eventBudget: count,
  fork: isBool,
  keepWarm: isBool,
  warmIdleMinutes: positive,
};

/** The settings this file reads, in the order of the interface. */
export const KEYS = Object.keys(VALID) as (keyof ExtensionSettings)[];

/** package.json's `contributes.configuration.properties`, keyed by full setting id. */
export const MANIFEST_PROPERTIES: Readonly<
  Partial<
    Record<
      string,
      {
        default?: unknown;
        scope?: string;
        enum?: unknown[];
        items?: { type?: unknown; enum?: unknown[] };
        minimum?: number;
        maximum?: number;
      }
    >
  >
> = contributes.configuration.properties;

/** The enums this file checks against, for the test that compares them with package.json. */
export const ENUMS = { passes: PASSES, serverSource: SOURCES } as const;

/** The bounds this file checks against, for the same test. */
export const BOUNDS = { nprocPerNode: NPROC } as const;

function manifestDefaults(): ExtensionSettings {
  const pick = <K extends keyof ExtensionSettings>(key: K): ExtensionSettings[K] => {
    const value = MANIFEST_PROPERTIES[`${SECTION}.${key}`]?.default;
    if (!VALID[key](value)) {
      // package.json is broken: a unit test guards against this.
      throw new Error(`package.json: ${SECTION}.${key} has no valid default (${JSON.stringify(value)})`);
    }
    return value;
  };
  return everySetting(pick);
}

/** Every setting, each from `pick`. */
function everySetting(pick: <K extends keyof ExtensionSettings>(key: K) => ExtensionSettings[K]): ExtensionSettings {
  return Object.fromEntries(KEYS.map((key) => [key, pick(key)])) as unknown as ExtensionSettings;
}

/** package.json's defaults: what config.get returns for unset keys, and the fallback for bad values. */
export const DEFAULTS: Readonly<ExtensionSettings> = Object.freeze(manifestDefaults());

/** Reads every setting through `get` (config.get, which applies package.json's defaults).
 * A missing or bad value falls back to package.json's default and is named in `problems`. */
export function readSettings(get: (key: string) => unknown): { settings: ExtensionSettings; problems: string[] } {
  const problems: string[] = [];
  const pick = <K extends keyof ExtensionSettings>(key: K): ExtensionSettings[K] => {
    const value = get(key);
    if (value === undefined || value === null) {
      return DEFAULTS[key];
    }
    if (VALID[key](value)) {
      return value;
    }
    problems.push(`${SECTION}.${key}: ${JSON.stringify(value)} is not valid; using ${JSON.stringify(DEFAULTS[key])}`);
    return DEFAULTS[key];
  };
  const settings = everySetting(pick);
  settings.interpreter = settings.interpreter.trim();
  return { settings, problems };
}

/** `${workspaceFolder}` (and `${workspaceFolderBasename}`) in a path setting. */
export function expandFolder(value: string, folder: string | undefined): string {
  if (folder === undefined) {
    return value;
  }
  const base = folder.split(/[\\/]/).filter(Boolean).pop() ?? "";
  return value.replace(/\$\{workspaceFolder\}/g, folder).replace(/\$\{workspaceFolderBasename\}/g, base);
}

/** The server's settings object (its camelCase keys), for initializationOptions and
 * workspace/didChangeConfiguration, from the window's settings (`bottleneck.*` read without a
 * resource). One server serves every workspace folder, so only what is the same for all of
 * them is set here: the thresholds, lenses, exactLines, separateCProfile, eventBudget and the warm start (window-scoped in
 * package.json: the server takes them only here), and `python`, the interpreter the server
 * process runs on, as the script's interpreter for requests that name none.
 *
 * The per-folder settings (args, cwd, passes, timeout, duration, the distributed job's nprocPerNode,
 * torchrunArgs and collectiveSizes, and the script's interpreter) travel with each request
 * (profileRequest). The server falls back to its own values when a request leaves one out
 * or sends it empty, so these are sent neutral: an empty
 * `passes` or `cwd` in one folder must mean "all passes" / "the folder holding the script",
 * not another folder's value. timeout, duration and the distributed ones are never left out of a
 * request, so the window's values here only cover requests from other clients. */
export function serverSettings(settings: ExtensionSettings, python: string): Record<string, unknown> {
  return {
    python,
    args: [],
    cwd: null,
    passes: null,
    timeout: settings.timeout,
    duration: settings.duration,
    nprocPerNode: settings.nprocPerNode,
    torchrunArgs: [...settings.torchrunArgs],
    collectiveSizes: settings.collectiveSizes,
    minShare: settings.minShare,
    warningShare: settings.warningShare,
    memoryShare: settings.memoryShare,
    top: settings.top,
    codeLens: settings.codeLens,
    exactLines: settings.exactLines,
    separateCProfile: settings.separateCProfile,
    eventBudget: settings.eventBudget,
    fork: settings.fork,
    keepWarm: settings.keepWarm,
    warmIdleMinutes: settings.warmIdleMinutes,
  };
}

/** bottleneck.profile's argument object (the server's ProfileArguments). */
export interface ProfileRequest {
  uri: string;
  args: string[];
  python: string;
  timeout: number;
  duration: number;
  nprocPerNode: number;
  torchrunArgs: string[];
  collectiveSizes: boolean;
  passes?: Pass[];
  cwd?: string;
}

/** The bottleneck.profile argument object for one script, from the settings of the workspace
 * folder that holds it (`folder`: that folder's path, for `${workspaceFolder}`) and the
 * interpreter chosen for it. `args`: the arguments remembered for this script, if any. */
export function profileRequest(
  uri: string,
  settings: ExtensionSettings,
  python: string,
  folder: string | undefined,
  args?: readonly string[],
): ProfileRequest {
  const request: ProfileRequest = {
    uri,
    args: [...(args ?? settings.args)],
    python,
    timeout: settings.timeout,
    // always sent, like timeout: the folder's values, never another's
    duration: settings.duration,
    nprocPerNode: settings.nprocPerNode,
    torchrunArgs: [...settings.torchrunArgs],
    collectiveSizes: settings.collectiveSizes,
  };
  if (settings.passes.length > 0) {
    request.passes = [...settings.passes]; // empty: the server's null, every pass that applies
  }
  if (settings.cwd) {
    request.cwd = expandFolder(settings.cwd, folder); // empty: the server picks the script's folder
  }
  return request;
}

/** How the server process starts: the bundled server puts the extension's own libraries
 * first on its path (sys.path, not PYTHONPATH, so the profiled script never sees them). */
export function serverLaunch(
  python: string,
  extensionPath: string,
  source: ServerSource,
): { command: string; args: string[] } {
  const launcher = `${extensionPath}/bundled/tool/serve.py`;
  return { command: python, args: source === "bundled" ? [launcher, "--bundled"] : [launcher] };
}
