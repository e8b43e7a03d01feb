// Notebooks without VS Code: which notebook a command means, and where a line the server
// names is, in a file or in a notebook's cell (unit-tested in test/notebookModel.test.ts).

/** A line to open: in a file, or in cell `cell` (1-based, markdown cells counted) of a
 * notebook. `line` and `column` are 1-based. */
export type Place =
  | { kind: "file"; uri: string; line: number; column: number }
  | { kind: "cell"; notebook: string; cell: number; line: number; column: number };

/** What the server gives for a line (a Hotspots row, a flame graph frame): its URI and, for
 * a notebook cell's, the notebook's URI and the cell's place in it. */
export interface Located {
  uri: string;
  line: number;
  column?: number;
  notebook?: string;
  cell?: number;
}

export function placeOf(item: Located): Place {
  const column = item.column ?? 1;
  if (item.notebook !== undefined && item.cell !== undefined) {
    return { kind: "cell", notebook: item.notebook, cell: item.cell, line: item.line, column };
  }
  return { kind: "file", uri: item.uri, line: item.line, column };
}

export function isNotebookPath(path: string): boolean {
  return path.toLowerCase().endsWith(".ipynb");
}

/** The notebook a command was given: the URI itself (a file's menu), or the notebook
 * toolbar's argument, `{notebookEditor: {notebookUri}}`; undefined when neither. */
export function givenNotebook<U>(arg: unknown, isUri: (value: unknown) => value is U): U | undefined {
  if (isUri(arg)) {
    return arg;
  }
  const editor = field(arg, "notebookEditor");
  const uri = field(editor, "notebookUri");
  return isUri(uri) ? uri : undefined;
}

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}
