// The extension's settings, read and checked once, and what the server gets from them.
// Pure: no vscode import, so that the unit tests run in plain Node.

export type ServerSource = "bundled" | "environment";
export type Pass = "sample" | "cprofile" | "cpu" | "cuda";

export interface ExtensionSettings {
  interpreter: string;
  serverSource: ServerSource;
  args: string[];
  cwd: string;
  passes: Pass[];
  timeout: number;
  minShare: number;
  warningShare: number;
  top: number;
  codeLens: boolean;
  exactLines: boolean;
  eventBudget: number;
}

export const DEFAULTS: ExtensionSettings = {
  interpreter: "",
  serverSource: "bundled",
  args: [],
  cwd: "",
  passes: [],
  timeout: 600,
  minShare: 0.05,
  warningShare: 0.2,
  top: 3,
  codeLens: true,
  exactLines: true,
  eventBudget: 250_000,
};

const PASSES: readonly string[] = ["sample", "cprofile", "cpu", "cuda"];

/** A bad value falls back to its default and is named in `problems`. */
export function readSettings(get: (key: string) => unknown): { settings: ExtensionSettings; problems: string[] } {
  const problems: string[] = [];
  const pick = <T>(key: keyof ExtensionSettings, ok: (v: unknown) => v is T, fallback: T): T => {
    const value = get(key);
    if (value === undefined || value === null) {
      return fallback;
    }
    if (ok(value)) {
      return value;
    }
    problems.push(`bottleneck.${key}: ${JSON.stringify(value)} is not valid; using ${JSON.stringify(fallback)}`);
    return fallback;
  };
  const isString = (v: unknown): v is string => typeof v === "string";
  const isBool = (v: unknown): v is boolean => typeof v === "boolean";
  const fraction = (v: unknown): v is number => typeof v === "number" && v >= 0 && v <= 1;
  const count = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
  const passes = (v: unknown): v is Pass[] => strings(v) && v.every((p) => PASSES.includes(p));
  const source = (v: unknown): v is ServerSource => v === "bundled" || v === "environment";
  const settings: ExtensionSettings = {
    interpreter: pick("interpreter", isString, DEFAULTS.interpreter).trim(),
    serverSource: pick("serverSource", source, DEFAULTS.serverSource),
    args: pick("args", strings, DEFAULTS.args),
    cwd: pick("cwd", isString, DEFAULTS.cwd),
    passes: pick("passes", passes, DEFAULTS.passes),
    timeout: pick("timeout", (v): v is number => typeof v === "number" && v > 0, DEFAULTS.timeout),
    minShare: pick("minShare", fraction, DEFAULTS.minShare),
    warningShare: pick("warningShare", fraction, DEFAULTS.warningShare),
    top: pick("top", count, DEFAULTS.top),
    codeLens: pick("codeLens", isBool, DEFAULTS.codeLens),
    exactLines: pick("exactLines", isBool, DEFAULTS.exactLines),
    eventBudget: pick("eventBudget", count, DEFAULTS.eventBudget),
  };
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
 * workspace/didChangeConfiguration. The interpreter that runs the server also runs the script. */
export function serverSettings(
  settings: ExtensionSettings,
  python: string,
  folder: string | undefined,
): Record<string, unknown> {
  return {
    python,
    args: settings.args,
    cwd: settings.cwd ? expandFolder(settings.cwd, folder) : null,
    passes: settings.passes.length > 0 ? settings.passes : null,
    timeout: settings.timeout,
    minShare: settings.minShare,
    warningShare: settings.warningShare,
    top: settings.top,
    codeLens: settings.codeLens,
    exactLines: settings.exactLines,
    eventBudget: settings.eventBudget,
  };
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
