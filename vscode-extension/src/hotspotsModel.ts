// The Hotspots view's data, without VS Code: the server's bottleneck.hotspots answer and how
// its rows are grouped and worded (unit-tested in test/hotspots.test.ts).

/** One marked line, as the server's bottleneck.hotspots lists it (docs/editors.md). */
export interface HotspotRow {
  uri: string;
  path: string;
  line: number;
  column: number;
  text: string;
  column_kind: string;
  column_label: string;
  share: number;
  time_s: number;
  bytes: number | null;
  severity: "warning" | "information" | "hint";
  lens: string;
  since: string;
  hover: string;
  notebook?: string; // a notebook cell's line: the notebook's URI
  cell?: number; // ... and the cell's place in it (1-based, markdown cells counted)
}

export interface PassState {
  name: string;
  status: string;
  detail: string;
}

export interface HotspotsAnswer {
  script: string | null;
  name?: string;
  running?: boolean;
  status?: string;
  summary?: string;
  verdict?: string;
  passes?: PassState[];
  compared_with?: string;
  cleared?: boolean;
  rows: HotspotRow[];
  message?: string;
}

export interface FileGroup {
  uri: string;
  path: string;
  notebook?: string; // a notebook cell's lines: the notebook's URI and the cell's place
  cell?: number;
  rows: HotspotRow[];
  share: number; // the largest share of its rows: the group's place
}

/** The rows by file, files in the order of their hottest line (the ranking's order kept within). */
export function byFile(rows: HotspotRow[]): FileGroup[] {
  const groups = new Map<string, FileGroup>();
  for (const row of rows) {
    let group = groups.get(row.uri);
    if (group === undefined) {
      group = { uri: row.uri, path: row.path || row.uri, rows: [], share: row.share, notebook: row.notebook, cell: row.cell };
      groups.set(row.uri, group);
    }
    group.rows.push(row);
  }
  return [...groups.values()];
}

/** A group's name: its file's path, or a notebook cell's as the command line says it
 * ("nb.ipynb cell 4"); `relative`: a file URI's path relative to the workspace. */
export function groupLabel(group: FileGroup, relative: (uri: string) => string): string {
  if (group.notebook !== undefined && group.cell !== undefined) {
    return `${relative(group.notebook)} cell ${group.cell}`;
  }
  return group.uri.startsWith("file:") ? relative(group.uri) : group.path;
}

/** "1.325 s", "276.7 ms", "48.0 MB" (a column of bytes). */
export function amount(row: HotspotRow): string {
  if (row.bytes !== null && row.time_s === 0) {
    const units = ["B", "KB", "MB", "GB", "TB"];
    let value = row.bytes;
    let unit = 0;
    while (value >= 1000 && unit < units.length - 1) {
      value /= 1000;
      unit += 1;
    }
    return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
  }
  return row.time_s >= 1 ? `${row.time_s.toFixed(3)} s` : `${(row.time_s * 1000).toFixed(1)} ms`;
}

/** A row's label (its line and text) and description (share, column, amount, change). */
export function rowLabel(row: HotspotRow): { label: string; description: string } {
  const text = row.text.length > 80 ? row.text.slice(0, 79) + "…" : row.text;
  const since = row.since ? ` · ${row.since}` : "";
  return {
    label: `${row.line}: ${text}`,
    description: `${(row.share * 100).toFixed(1)}% ${row.column_label} · ${amount(row)}${since}`,
  };
}

/** "sample ok · cpu ok", each pass of the run and its status. */
export function passesLine(passes: PassState[]): string {
  return passes.map((p) => `${p.name} ${p.status.replace(/_/g, " ")}`).join(" · ");
}
