// The extension's settings, read and checked, and what the server gets from them: the
// server-wide settings (initializationOptions, workspace/didChangeConfiguration) and the
// per-folder ones that travel with each bottleneck.profile request.
// Pure: no vscode import, so that the unit tests run in plain Node.
//
// package.json's `contributes.configuration.properties` is the one statement of the settings:
// their names, types, bounds, enums, defaults and scopes. Nothing here is written per setting
// except for the few that the extension itself reads (the interpreter, the server source, and
// the args, cwd and passes it turns into a request's fields): a new server setting needs only
// its package.json entry. Its scope says where it goes: "window" (one server for the whole
// window) in the server-wide object only; "resource" (per workspace folder) with each request too.
import { contributes } from "../package.json";

export const SECTION = "bottleneck";

/** A setting's JSON schema in package.json, as far as it is checked here. */
export interface Schema {
  readonly type?: string | readonly string[];
  readonly default?: unknown;
  readonly scope?: string;
  readonly enum?: readonly unknown[];
  readonly items?: Schema;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
}

/** One setting: its key under `bottleneck.` and its schema. */
export interface Property {
  readonly key: string;
  readonly schema: Schema;
}

/** package.json's `contributes.configuration.properties`, keyed by full setting id. */
export const MANIFEST_PROPERTIES: Readonly<Partial<Record<string, Schema>>> = contributes.configuration.properties;

/** The `bottleneck.*` settings of a manifest's properties, in its order. */
export function propertiesOf(manifest: Readonly<Partial<Record<string, Schema>>>): readonly Property[] {
  const prefix = `${SECTION}.`;
  return Object.entries(manifest).flatMap(([id, schema]) =>
    id.startsWith(prefix) && schema !== undefined ? [{ key: id.slice(prefix.length), schema }] : [],
  );
}

/** package.json's settings, in its order. */
export const PROPERTIES: readonly Property[] = propertiesOf(MANIFEST_PROPERTIES);

/** The settings this file reads (every one package.json declares), in its order. */
export const KEYS: readonly string[] = PROPERTIES.map(({ key }) => key);

/** The extension's own settings: read here (or by vscode-languageclient), never sent to the
 * server. The interpreter reaches it as `python`, the script's interpreter. */
export const CLIENT_ONLY: readonly string[] = ["interpreter", "serverSource", "trace.server"];

/** The settings whose change restarts the server (the others are pushed to it). */
export const RESTART_KEYS: readonly string[] = ["interpreter", "serverSource"];

/** Whether a configuration change restarts the server: `affects`, the event's affectsConfiguration. */
export function restartsServer(affects: (id: string) => boolean): boolean {
  return RESTART_KEYS.some((key) => affects(`${SECTION}.${key}`));
}

/** A per-folder setting (package.json's scope "resource"), sent with each request. Any other
 * scope (window, or none) is server-wide. */
export const perFolder = (schema: Schema): boolean => schema.scope === "resource";

function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return Number.isInteger(value);
    case "array":
      return Array.isArray(value);
    case "null":
      return value === null;
    default:
      return false; // a type this file does not check: a unit test guards against it
  }
}

/** The JSON schema types this file checks. */
export const TYPES: readonly string[] = ["string", "boolean", "number", "integer", "array", "null"];

/** Whether `value` fits `schema`: its type, enum, bounds, and each item's. */
export function fits(schema: Schema, value: unknown): boolean {
  if (schema.type !== undefined) {
    const types: readonly string[] = typeof schema.type === "string" ? [schema.type] : schema.type;
    if (!types.some((type) => hasType(type, value))) {
      return false;
    }
  }
  if (schema.enum !== undefined && !schema.enum.includes(value)) {
    return false;
  }
  if (typeof value === "number") {
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
    if (
      Number.isNaN(value) ||
      (minimum !== undefined && value < minimum) ||
      (maximum !== undefined && value > maximum) ||
      (exclusiveMinimum !== undefined && value <= exclusiveMinimum) ||
      (exclusiveMaximum !== undefined && value >= exclusiveMaximum)
    ) {
      return false;
    }
  }
  const items = schema.items;
  return !(Array.isArray(value) && items !== undefined && !value.every((item) => fits(items, item)));
}

export type ServerSource = "bundled" | "environment";

/** Every setting's checked value, by key (`settings.timeout`); typed for the few the extension
 * itself reads (package.json's schemas for them are checked against these types by a unit test). */
export interface ExtensionSettings {
  readonly [key: string]: unknown;
  readonly interpreter: string;
  readonly serverSource: ServerSource;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly passes: readonly string[];
}

/** package.json's defaults of `properties`: what config.get returns for unset keys, and the
 * fallback for bad values. */
export function defaultsOf(properties: readonly Property[]): Readonly<ExtensionSettings> {
  const values = properties.map(({ key, schema }) => {
    if (!fits(schema, schema.default)) {
      // package.json is broken: a unit test guards against this.
      throw new Error(`package.json: ${SECTION}.${key} has no valid default (${JSON.stringify(schema.default)})`);
    }
    return [key, schema.default] as const;
  });
  return Object.freeze(Object.fromEntries(values)) as ExtensionSettings;
}

/** package.json's defaults. */
export const DEFAULTS: Readonly<ExtensionSettings> = defaultsOf(PROPERTIES);

/** Reads every setting through `get` (config.get, which applies package.json's defaults).
 * A missing or bad value falls back to package.json's default and is named in `problems`. */
export function readSettings(
  get: (key: string) => unknown,
  properties: readonly Property[] = PROPERTIES,
): { settings: ExtensionSettings; problems: string[] } {
  const defaults = properties === PROPERTIES ? DEFAULTS : defaultsOf(properties);
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const { key, schema } of properties) {
    const value = get(key);
    if (value === undefined || value === null) {
      values[key] = defaults[key];
    } else if (fits(schema, value)) {
      values[key] = value;
    } else {
      problems.push(`${SECTION}.${key}: ${JSON.stringify(value)} is not valid; using ${JSON.stringify(defaults[key])}`);
      values[key] = defaults[key];
    }
  }
  const interpreter = values.interpreter;
  if (typeof interpreter === "string") {
    values.interpreter = interpreter.trim();
  }
  return { settings: values as ExtensionSettings, problems };
}

/** `${workspaceFolder}` (and `${workspaceFolderBasename}`) in a path setting. */
export function expandFolder(value: string, folder: string | undefined): string {
  if (folder === undefined) {
    return value;
  }
  const base = folder.split(/[\\/]/).filter(Boolean).pop() ?? "";
  return value.replace(/\$\{workspaceFolder\}/g, folder).replace(/\$\{workspaceFolderBasename\}/g, base);
}

/** A value as sent: arrays copied, so that the settings' own are never shared. */
const sent = (value: unknown): unknown => (Array.isArray(value) ? [...(value as unknown[])] : value);

/** The per-folder settings whose request fields the extension writes itself (profileRequest),
 * and what the server-wide object says for them: neutral. The server falls back to its own
 * values when a request leaves one out or sends it empty, so an empty `passes` or `cwd` in
 * one folder must find null there ("all passes" / "the folder holding the script"), not
 * another folder's value; `args` always travels with the request. */
const neutral = (): Record<string, unknown> => ({ args: [], cwd: null, passes: null });

/** The server's settings object (its camelCase keys, package.json's), for initializationOptions
 * and workspace/didChangeConfiguration, from the window's settings (`bottleneck.*` read without
 * a resource). One server serves every workspace folder: `python`, the interpreter the server
 * process runs on, as the script's interpreter for requests that name none; every window-scoped
 * setting (the server takes them only here); and the per-folder ones, which travel with each
 * request (profileRequest): args, cwd and passes neutral (above), the others (timeout and the
 * like, never left out of a request) with the window's values, which only cover requests from
 * other clients. The extension's own settings (CLIENT_ONLY) are not sent. */
export function serverSettings(
  settings: ExtensionSettings,
  python: string,
  properties: readonly Property[] = PROPERTIES,
): Record<string, unknown> {
  const object: Record<string, unknown> = { python, ...neutral() };
  for (const { key } of properties) {
    if (!CLIENT_ONLY.includes(key) && !(key in object)) {
      object[key] = sent(settings[key]);
    }
  }
  return object;
}

/** bottleneck.profile's argument object (the server's ProfileArguments): the script, its
 * arguments and interpreter, and every per-folder setting by its key. */
export interface ProfileRequest {
  [key: string]: unknown;
  uri: string;
  args: string[];
  python: string;
}

/** The bottleneck.profile argument object for one script, from the settings of the workspace
 * folder that holds it (`folder`: that folder's path, for `${workspaceFolder}`) and the
 * interpreter chosen for it. `args`: the arguments remembered for this script, if any, else
 * the folder's setting. Every per-folder setting is sent (the folder's value, never another's),
 * except that an empty `passes` or `cwd` is left out: the server's null, every pass that
 * applies / the folder holding the script. */
export function profileRequest(
  uri: string,
  settings: ExtensionSettings,
  python: string,
  folder: string | undefined,
  args?: readonly string[],
  properties: readonly Property[] = PROPERTIES,
): ProfileRequest {
  const request: ProfileRequest = { uri, args: [...(args ?? settings.args)], python };
  const own = neutral();
  for (const { key, schema } of properties) {
    if (perFolder(schema) && !CLIENT_ONLY.includes(key) && !(key in own)) {
      request[key] = sent(settings[key]);
    }
  }
  if (settings.passes.length > 0) {
    request.passes = [...settings.passes];
  }
  if (settings.cwd) {
    request.cwd = expandFolder(settings.cwd, folder);
  }
  return request;
}

/** How the server process starts: the bundled server puts the extension's own libraries
 * first on its path (sys.path, not PYTHONPATH, so the profiled script never sees them).
 * `source`: where the server comes from, for the log. */
export function serverLaunch(
  python: string,
  extensionPath: string,
  settings: Pick<ExtensionSettings, "serverSource">,
): { command: string; args: string[]; source: ServerSource } {
  const launcher = `${extensionPath}/bundled/tool/serve.py`;
  const source = settings.serverSource;
  return { command: python, args: source === "bundled" ? [launcher, "--bundled"] : [launcher], source };
}
