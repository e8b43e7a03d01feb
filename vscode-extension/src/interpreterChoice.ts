// Which interpreter, and why: the precedence of the three sources, without vscode, so that
// the unit tests run in plain Node. interpreter.ts asks the Python extension.

export interface Interpreter {
  path: string;
  /** Where it came from, as the log and the error messages say it. */
  from: "bottleneck.interpreter" | "Python extension" | "PATH";
}

/**
 * The `bottleneck.interpreter` setting when it is set (for the script's workspace folder);
 * else the Python extension's active interpreter for that folder (`pythonExtension` is asked
 * only then, and answers undefined when that extension is absent or has none); else `python3`
 * on PATH.
 */
export async function chooseInterpreter(
  configured: string,
  pythonExtension: () => Promise<string | undefined>,
): Promise<Interpreter> {
  const setting = configured.trim();
  if (setting) {
    return { path: setting, from: "bottleneck.interpreter" };
  }
  const active = await pythonExtension();
  if (active) {
    return { path: active, from: "Python extension" };
  }
  return { path: "python3", from: "PATH" };
}

/** What to do about an interpreter that cannot run the server, given where it came from. */
export function remedy(from: Interpreter["from"]): string {
  return from === "bottleneck.interpreter"
    ? "Set bottleneck.interpreter to a Python 3.10+ interpreter, or clear it to use the Python extension's."
    : "Choose a Python 3.10+ interpreter (the Python extension's interpreter picker or the bottleneck.interpreter setting).";
}
