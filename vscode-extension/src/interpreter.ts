// Which Python runs the server and the profiled script: the bottleneck.interpreter setting
// for the file's workspace folder when set, else the Python extension's active interpreter for
// that folder, else python3 on PATH (the precedence is chooseInterpreter's, in interpreterChoice.ts).
import { execFile } from "node:child_process";
import * as vscode from "vscode";
import { PythonExtension } from "@vscode/python-extension";
import { chooseInterpreter, type Interpreter } from "./interpreterChoice";

export type { Interpreter } from "./interpreterChoice";

const PYTHON_EXTENSION = "ms-python.python";

async function pythonApi(): Promise<PythonExtension | undefined> {
  if (vscode.extensions.getExtension(PYTHON_EXTENSION) === undefined) {
    return undefined;
  }
  try {
    return await PythonExtension.api();
  } catch {
    return undefined;
  }
}

/** `configured`: the bottleneck.interpreter setting as read for `resource`'s workspace folder. */
export async function findInterpreter(
  resource: vscode.Uri | undefined,
  configured: string,
  log: vscode.LogOutputChannel,
): Promise<Interpreter> {
  return chooseInterpreter(configured, async () => {
    const api = await pythonApi();
    if (api === undefined) {
      return undefined;
    }
    const where = resource?.fsPath ?? "this window";
    try {
      const active = api.environments.getActiveEnvironmentPath(resource);
      const resolved = await api.environments.resolveEnvironment(active);
      const executable = resolved?.executable.uri?.fsPath;
      if (!executable) {
        log.warn(`the Python extension has no usable interpreter for ${where}`);
      }
      return executable;
    } catch (error) {
      log.warn(`the Python extension could not say its interpreter for ${where}: ${String(error)}`);
      return undefined;
    }
  });
}

/** Calls `listener` when the Python extension's active interpreter changes. */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const api = await pythonApi();
  return api?.environments.onDidChangeActiveEnvironmentPath(() => {
    listener();
  });
}

export interface ProbeResult {
  ok: boolean;
  detail: string;
}

/** Runs the launcher's --check: the interpreter exists, is Python 3.10+, and imports the server. */
export function probe(command: string, args: string[], timeoutMs = 30_000): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(command, [...args, "--check"], { timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      if (error === null) {
        resolve({ ok: true, detail: stdout.trim() });
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        resolve({ ok: false, detail: `${command} was not found` });
      } else if (code === "EACCES") {
        resolve({ ok: false, detail: `${command} is not executable` });
      } else if (error.killed) {
        resolve({ ok: false, detail: `${command} did not answer within ${timeoutMs / 1000} s` });
      } else {
        resolve({ ok: false, detail: (stderr.trim() || error.message).slice(0, 2000) });
      }
    });
  });
}
