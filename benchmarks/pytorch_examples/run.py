"""Does bottleneck-lsp's first hotspot match py-spy's hottest line on real pytorch/examples scripts?

Usage:
  python3 benchmarks/pytorch_examples/run.py EXAMPLES [--work DIR] [--venv DIR] [--cpu-torch]
      [--only a,b] [--label NAME]
  python3 benchmarks/pytorch_examples/run.py - --label NAME --reanalyze   # recompute a run's summary

EXAMPLES is a checkout of github.com/pytorch/examples, or the bare git directory that the
fetch tool gives (the five examples' folders are then extracted from its HEAD with `git show`;
`git archive` fails there on a missing large blob, word_language_model's wikitext-2 train.txt,
which is not needed).

What it does, from a fresh machine (2 CPU cores, no internet apart from the package index):
  1. creates the venv DIR (default /tmp/exvenv) if missing: torch==2.14.1 torchvision==0.29.1
     (--cpu-torch: this machine's CPU build of torch 2.13.0 and torchvision 0.28.0) py-spy
     matplotlib, and this repository (pip install -e), so that DIR/bin/bottleneck-lsp
     profiles in that interpreter;
  2. generates small fake data (data.py next to this file): MNIST raw IDX files in
     WORK/data/MNIST/raw (vae and mnist_rnn open '../data' from their working directory
     WORK/<example>), a Wikitext-2-style corpus in WORK/wikitext; for time_sequence_prediction
     runs the example's own generate_sine_wave.py, then keeps the first SINE_LEN columns of
     its traindata.pt (same format: a float64 numpy array, N x L) so that one LBFGS step takes
     seconds instead of ~45 s;
  3. for each example, one at a time, with OMP_NUM_THREADS=1 (--threads; see its help):
     runs it bare (timed), under py-spy (raw collapsed stacks,
     100 Hz, --idle so that it is wall time like our sample pass, --threads to keep the main
     thread only), and under `bottleneck-lsp profile --format json -o ...` (default passes),
     then renders the text report from that JSON with the package's own report.render (what
     `--format text` prints);
  4. prints a table: example | bare s | py-spy top line (share) | our first line (share, column)
     | match | ours s | ours / bare | peak RSS of each side (the largest process of its tree)
     | the cpu pass's windows, and writes WORK/results/LABEL/summary.json and table.md.

py-spy's hot line: per sample of the main thread, the innermost frame in the example's folder;
samples with no frame of the example (interpreter start-up and shutdown) are left out, and so
are those importing torch itself (an import statement with torch/__init__.py's module code
below it: our fork server pays `import torch` before the script, and our wall column sets it
aside); shares are of the remaining samples. This is our wall column's denominator since the
one run (issue 46): the main thread's time from the script's first line to its end, with the
script's other imports (`from torchvision import ...`, and what they make torch load lazily,
its compiler stack) on their lines, as the bare run pays them.
Two more counts, kept for the runs before the one run (`--separate-runs` still has the fork
server load torch's compiler stack ahead): `top_no_imports` also leaves out every sample of
an import statement (the next frame is importlib's _find_and_load/_handle_fromlist), and
`top_no_lazy_imports` also lazy imports run under other lines (an importlib frame anywhere
below the innermost example frame).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SINE_LEN = 250  # time_sequence_prediction: columns kept of generate_sine_wave.py's 1000
MNIST_TRAIN, MNIST_TEST, WORDS = 4000, 1000, 40000

# name -> (folder, script, args, extra env)
EXAMPLES: dict[str, tuple[str, str, list[str], dict[str, str]]] = {
    "vae": ("vae", "main.py", ["--epochs", "1"], {}),
    "mnist_rnn": ("mnist_rnn", "main.py", ["--epochs", "1"], {}),
    "word_language_model": (
        "word_language_model",
        "main.py",
        ["--data", "{work}/wikitext", "--epochs", "1"],
        {},
    ),
    # torch >= 2.6 loads with weights_only=True, which refuses the numpy array that
    # generate_sine_wave.py saves; the environment variable restores the old default
    # without touching train.py.
    "time_sequence_prediction": (
        "time_sequence_prediction",
        "train.py",
        ["--steps", "1"],
        {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"},
    ),
    "dcgan": (
        "dcgan",
        "main.py",
        [
            "--dataset",
            "fake",
            "--niter",
            "1",
            "--workers",
            "0",
            "--manualSeed",
            "1",
            "--ngf",
            "16",
            "--ndf",
            "16",
        ],
        {},
    ),
}
IMPORT_FUNCS = {"_find_and_load", "_handle_fromlist", "_gcd_import", "import_module"}
TORCH_INIT = os.path.join("torch", "__init__.py")


def sh(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, text=True, **kw)


def ensure_venv(venv: str, cpu_torch: bool = False) -> str:
    """The venv, made when missing. ``cpu_torch``: this machine's CPU build of torch 2.13.0
    and torchvision 0.28.0 without its dependencies (which would pull a CUDA torch); its
    compiled ``_C`` needs CUDA's libraries, so the two modules that register fake and autograd
    kernels for the ``torchvision::`` ops (which the examples do not use) are emptied there.
    Otherwise torch 2.14.1 and torchvision 0.29.1 as published (CUDA builds, about 5.5 GB)."""
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        sh([sys.executable, "-m", "venv", venv], check=True)
    probe = "import torch, torchvision, matplotlib, bottleneck_lsp"
    if sh([py, "-c", probe], capture_output=True).returncode != 0:
        pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        if cpu_torch:
            sh([*pip, "torch==2.13.0", "pillow", "numpy", "matplotlib", "py-spy"], check=True)
            sh([*pip, "--no-deps", "torchvision==0.28.0"], check=True)
            _empty_torchvision_registrations(py)
        else:
            sh([*pip, "torch==2.14.1", "torchvision==0.29.1", "py-spy", "matplotlib"], check=True)
        sh([*pip, "-e", REPO], check=True)
        sh([py, "-c", probe], check=True)
    if not os.path.exists(os.path.join(venv, "bin", "py-spy")):
        sh([py, "-m", "pip", "install", "-q", "py-spy"], check=True)
    # our package's .pyc files, as a wheel install has them (benchmarks/engine.py's bytecode)
    sh([py, "-m", "compileall", "-q", os.path.join(REPO, "server")], check=False)
    return py


def _empty_torchvision_registrations(py: str) -> None:
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = sh([py, "-c", where], capture_output=True, check=True).stdout.strip()
    for name in ("_meta_registrations.py", "_autograd_registrations.py"):
        with open(os.path.join(site, "torchvision", name), "w") as f:
            f.write("# emptied: torchvision's _C needs CUDA libraries, this torch is a CPU build\n")


def examples_tree(src: str, work: str) -> str:
    """A work tree of the examples: SRC itself, or extracted from a bare git directory."""
    if os.path.isdir(os.path.join(src, "vae")):
        return os.path.abspath(src)
    dest = os.path.join(work, "examples")
    names = subprocess.run(
        ["git", "--git-dir", src, "ls-tree", "-r", "--name-only", "HEAD"],
        text=True,
        capture_output=True,
        check=True,
    ).stdout.split()
    folders = {f for f, *_ in EXAMPLES.values()}
    for name in names:
        if name.split("/")[0] not in folders or "/data/" in name:
            continue
        path = os.path.join(dest, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        blob = subprocess.run(["git", "--git-dir", src, "show", f"HEAD:{name}"], capture_output=True)
        if blob.returncode == 0:
            with open(path, "wb") as f:
                f.write(blob.stdout)
    head = subprocess.run(
        ["git", "--git-dir", src, "rev-parse", "HEAD"], text=True, capture_output=True
    ).stdout
    with open(os.path.join(dest, "COMMIT"), "w") as f:
        f.write(head)
    return dest


def make_data(py: str, ex: str, work: str) -> None:
    sh(
        [
            sys.executable,
            os.path.join(HERE, "data.py"),
            work,
            "--mnist-train",
            str(MNIST_TRAIN),
            "--mnist-test",
            str(MNIST_TEST),
            "--words",
            str(WORDS),
        ],
        check=True,
    )
    tsp = os.path.join(work, "time_sequence_prediction")
    os.makedirs(tsp, exist_ok=True)
    sh([py, os.path.join(ex, "time_sequence_prediction", "generate_sine_wave.py")], cwd=tsp, check=True)
    trim = (
        "import torch; d = torch.load('traindata.pt', weights_only=False); "
        f"torch.save(d[:, :{SINE_LEN}].copy(), open('traindata.pt', 'wb')); "
        f"print('traindata.pt', d.shape, '->', d[:, :{SINE_LEN}].shape)"
    )
    sh([py, "-c", trim], cwd=tsp, check=True)
    for name in EXAMPLES:
        os.makedirs(os.path.join(work, name), exist_ok=True)
    os.makedirs(os.path.join(work, "vae", "results"), exist_ok=True)


# ---------------------------------------------------------------- statements, for "same statement"


_SPANS: dict[str, list[tuple[int, int]]] = {}


def statement_span(path: str, line: int) -> tuple[int, int]:
    cache = _SPANS
    if path not in cache:
        spans: list[tuple[int, int]] = []
        try:
            with open(path, encoding="utf8") as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.stmt) and not hasattr(node, "body"):
                    spans.append((node.lineno, node.end_lineno or node.lineno))
        except (OSError, SyntaxError):
            pass
        cache[path] = spans
    inside = [s for s in cache[path] if s[0] <= line <= s[1]]
    return min(inside, key=lambda s: s[1] - s[0]) if inside else (line, line)


def source_line(path: str, line: int) -> str:
    try:
        with open(path, encoding="utf8") as f:
            return f.read().splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return ""


# ---------------------------------------------------------------- py-spy

FRAME = re.compile(r"^(?P<func>.*) \((?P<file>.*):(?P<line>\d+)\)$")
THREAD = re.compile(r"^thread \((?P<tid>\d+)\)(?::\s*(?P<name>.*))?$")


def pyspy_lines(raw: str, folder: str) -> dict[str, Any]:
    """py-spy's raw output (``--threads``: each stack starts with ``thread (TID): NAME``) ->
    per line of the example's folder, the main thread's samples whose innermost frame in the
    folder is that line. The main thread is the TID that py-spy names MainThread; its early
    samples, before the threading module names it, carry the same TID without a name."""
    folder = os.path.realpath(folder) + os.sep
    stacks: list[tuple[str, list[str], int]] = []
    main_tid = None
    with open(raw, encoding="utf8", errors="replace") as f:
        for text in f:
            text = text.rstrip("\n")
            if not text:
                continue
            stack, _, count_s = text.rpartition(" ")
            parts = stack.split(";")
            m = THREAD.match(parts[0])
            tid = m["tid"] if m else parts[0]
            if m and (m["name"] or "").strip() == "MainThread":
                main_tid = tid
            stacks.append((tid, parts[1:], int(count_s)))
    hot: Counter[tuple[str, int]] = Counter()
    hot_noimports: Counter[tuple[str, int]] = Counter()
    hot_nolazy: Counter[tuple[str, int]] = Counter()
    imports: Counter[tuple[str, int]] = Counter()
    lazy: Counter[tuple[str, int]] = Counter()
    total = outside = other_threads = torch_import = 0
    for tid, parts, count in stacks:
        if tid != main_tid:
            other_threads += count
            continue
        frames = [FRAME.match(p) for p in parts]
        total += count
        idx = None
        for i, fm in enumerate(frames):
            if fm and os.path.realpath(fm["file"]).startswith(folder):
                idx = i
        if idx is None:
            outside += count  # interpreter start-up and shutdown: no frame of the example
            continue
        fm = frames[idx]
        assert fm is not None
        key = (os.path.realpath(fm["file"]), int(fm["line"]))
        below = [b["func"] for b in frames[idx + 1 :] if b]
        if below and below[0] in IMPORT_FUNCS:
            if any(
                b and b["func"] == "<module>" and b["file"].endswith(TORCH_INIT) for b in frames[idx + 1 :]
            ):
                torch_import += count  # `import torch`: our start-up, set aside
                continue
            imports[key] += count
            hot[key] += count
            continue
        hot[key] += count
        hot_noimports[key] += count
        if any(fn in IMPORT_FUNCS for fn in below):
            lazy[key] += count
        else:
            hot_nolazy[key] += count
    base = sum(hot.values())
    base_noimports = sum(hot_noimports.values())
    base_nolazy = sum(hot_nolazy.values())

    def rows(c: Counter[tuple[str, int]], denom: int) -> list[dict[str, Any]]:
        return [
            {
                "file": k[0],
                "line": k[1],
                "samples": n,
                "share": n / denom if denom else 0.0,
                "text": source_line(*k),
            }
            for k, n in c.most_common(5)
        ]

    return {
        "main_samples": total,
        "outside_example_files": outside,
        "other_thread_samples": other_threads,
        "torch_import_samples": torch_import,
        "import_samples": sum(imports.values()),
        "imports": rows(imports, base),
        "lazy_import_samples": sum(lazy.values()),
        "lazy_imports": rows(lazy, base_noimports),
        "counted_samples": base,
        "top": rows(hot, base),
        "top_no_imports": rows(hot_noimports, base_noimports),
        "top_no_lazy_imports": rows(hot_nolazy, base_nolazy),
    }


# ---------------------------------------------------------------- ours


def ours_summary(doc: dict[str, Any], text: str) -> dict[str, Any]:
    ranking = doc.get("ranking") or {}
    rows = []
    for r in (ranking.get("lines") or [])[:5]:
        cols = {k: round(v["share"], 4) for k, v in (r.get("columns") or {}).items() if v}
        rows.append(
            {
                "file": r["file"],
                "line": r["line"],
                "column": r.get("column"),
                "text": r.get("text", ""),
                "share": r.get("share"),
                "time_s": r.get("time_s"),
                "columns": cols,
                "backward": r.get("backward"),
                "exact": r.get("exact"),
            }
        )
    first_text = None
    for t in text.splitlines():
        m = re.match(r"^(?P<file>\S+?):(?P<line>\d+):(?P<col>\d+): (?P<level>warning|note): (?P<msg>.*)$", t)
        if m:
            first_text = m.groupdict()
            break
    passes = {
        p["name"]: {
            k: p.get(k)
            for k in ("status", "wall_s", "script_wall_s", "event_count", "startup", "notes", "windows")
            if k in p
        }
        for p in doc.get("passes", [])
    }
    return {
        "ranked_by": ranking.get("ranked_by"),
        "rows": rows,
        "first_text_line": first_text,
        "status": doc.get("status"),
        "exit_code": doc.get("exit_code"),
        "passes": passes,
    }


RENDER = (
    "import json, sys; from bottleneck_lsp.formats import report; "
    "from bottleneck_lsp.schema.model import Document; "
    "doc = Document.from_json(json.load(open(sys.argv[1]))); "
    "sys.stdout.write(report.render(doc, cwd=sys.argv[2]))"
)


# Runs a command with its output where the caller sends it, then writes the peak RSS (MB) of
# the command's largest process (RUSAGE_CHILDREN of this fresh wrapper) to the file argv[1].
_PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[2:]).returncode\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))\n"
    "sys.exit(rc)\n"
)


def measured(py: str, cmd: list[str], rss_file: str) -> list[str]:
    """``cmd`` run under the peak-RSS wrapper, which writes its figure to ``rss_file``."""
    return [py, "-c", _PEAK_RSS, rss_file, *cmd]


def read_rss(rss_file: str) -> float | None:
    try:
        with open(rss_file) as f:
            return float(f.read())
    except (OSError, ValueError):
        return None


def run_one(name: str, py: str, venv: str, ex: str, work: str, out: str, threads: int) -> dict[str, Any]:
    folder, script_name, args_t, extra = EXAMPLES[name]
    if threads:
        extra = {**extra, "OMP_NUM_THREADS": str(threads)}
    script = os.path.join(ex, folder, script_name)
    args = [a.format(work=work) for a in args_t]
    cwd = os.path.join(work, name)
    env = {**os.environ, **extra}
    os.makedirs(out, exist_ok=True)
    res: dict[str, Any] = {"name": name, "script": script, "args": args, "cwd": cwd, "env": extra}
    res["loadavg_before"] = os.getloadavg()

    # bare
    with open(os.path.join(out, "bare.log"), "w") as log:
        t = time.perf_counter()
        rss = os.path.join(out, "bare.rss")
        cmd = measured(py, [py, script, *args], rss)
        rc = sh(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
        res["bare_s"] = time.perf_counter() - t
        res["bare_rc"] = rc
        res["bare_rss_mb"] = read_rss(rss)

    # py-spy
    raw = os.path.join(out, "pyspy.raw.txt")
    spy = os.path.join(venv, "bin", "py-spy")
    cmd = [
        spy,
        "record",
        "--format",
        "raw",
        "--rate",
        "100",
        "--idle",
        "--threads",
        "--full-filenames",
        "-o",
        raw,
    ]
    with open(os.path.join(out, "pyspy.log"), "w") as log:
        t = time.perf_counter()
        rc = sh(
            [*cmd, "--", py, script, *args], cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT
        ).returncode
        res["pyspy_s"] = time.perf_counter() - t
        res["pyspy_rc"] = rc

    # ours
    js = os.path.join(out, "ours.json")
    cli = os.path.join(venv, "bin", "bottleneck-lsp")
    with open(os.path.join(out, "ours.log"), "w") as log:
        t = time.perf_counter()
        rss = os.path.join(out, "ours.rss")
        cmd = [cli, "profile", "--format", "json", "-o", js, "--timeout", "600", script, *args]
        rc = sh(measured(py, cmd, rss), cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
        res["ours_s"] = time.perf_counter() - t
        res["ours_rc"] = rc
        res["ours_rss_mb"] = read_rss(rss)
    if os.path.exists(js):
        txt = sh([py, "-c", RENDER, js, cwd], capture_output=True)
        text = txt.stdout if txt.returncode == 0 else ""
        with open(os.path.join(out, "ours.txt"), "w") as f:
            f.write(text if text else txt.stderr)
    res["loadavg_after"] = os.getloadavg()
    analyze(res, ex, out)
    return res


def verdict(res: dict[str, Any]) -> dict[str, Any]:
    spy, ours = res.get("pyspy"), res.get("ours")
    if not spy or not spy["top"] or not ours or not ours["rows"]:
        return {"match": "n/a"}
    p, o = spy["top"][0], ours["rows"][0]
    pf, of = os.path.realpath(p["file"]), os.path.realpath(o["file"])
    if (pf, p["line"]) == (of, o["line"]):
        match = "yes"
    elif pf == of and statement_span(pf, p["line"]) == statement_span(of, o["line"]):
        match = "same statement"
    else:
        match = "no"
    out: dict[str, Any] = {"match": match}
    q = spy["top_no_lazy_imports"]
    if q:
        out["match_no_lazy"] = (
            "yes" if (os.path.realpath(q[0]["file"]), q[0]["line"]) == (of, o["line"]) else "no"
        )
    ft = ours.get("first_text_line")
    if ft:
        out["text_equals_json"] = ft["line"] == str(o["line"]) and os.path.basename(
            ft["file"]
        ) == os.path.basename(o["file"])
    return out


def where(row: dict[str, Any], ex: str) -> str:
    return f"{os.path.relpath(row['file'], ex)}:{row['line']}"


def table(results: list[dict[str, Any]], ex: str) -> str:
    head = (
        "| example | bare s | py-spy top line (share) | our first line (share, column) | match | ours s "
        "| ours / bare | peak RSS bare / ours MB | op CPU windows |"
    )
    lines = [head, "|" + " --- |" * 9]
    for r in results:
        spy, ours = r.get("pyspy"), r.get("ours")
        if spy and spy["top"]:
            p = spy["top"][0]
            ptxt = f"`{where(p, ex)}` {p['share']:.1%}"
        else:
            ptxt = "-"
        if ours and ours["rows"]:
            o = ours["rows"][0]
            otxt = f"`{where(o, ex)}:{o['column']}` {o['share']:.1%} {ours['ranked_by']}"
        else:
            otxt = f"- (rc {r.get('ours_rc')})"
        match, ours_s = r["verdict"]["match"], r.get("ours_s", 0)
        ratio = f"{ours_s / r['bare_s']:.2f}x" if r.get("bare_s") else "-"
        rss = f"{_mb(r.get('bare_rss_mb'))} / {_mb(r.get('ours_rss_mb'))}"
        lines.append(
            f"| {r['name']} | {r['bare_s']:.1f} | {ptxt} | {otxt} | {match} | {ours_s:.1f} | {ratio} | {rss} "
            f"| {_windows(ours)} |"
        )
    return "\n".join(lines)


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _windows(ours: dict[str, Any] | None) -> str:
    """The cpu pass's windows: how many, and how much of the run they recorded."""
    windows = ((ours or {}).get("passes", {}).get("cpu") or {}).get("windows")
    if not windows:
        return "whole run"
    return f"{windows.get('count')}, {windows.get('recorded_s', 0):.2f} s of {windows.get('run_s', 0):.2f} s"


def analyze(res: dict[str, Any], ex: str, out: str) -> None:
    """The py-spy and ours columns of one example, from its saved files."""
    folder = EXAMPLES[res["name"]][0]
    raw, js, txt = (os.path.join(out, n) for n in ("pyspy.raw.txt", "ours.json", "ours.txt"))
    res["pyspy"] = pyspy_lines(raw, os.path.join(ex, folder)) if os.path.exists(raw) else None
    if os.path.exists(js):
        with open(js) as f, open(txt) as g:
            res["ours"] = ours_summary(json.load(f), g.read())
    else:
        res["ours"] = None
    res["verdict"] = verdict(res)


def reanalyze(outdir: str) -> None:
    with open(os.path.join(outdir, "summary.json")) as f:
        doc = json.load(f)
    for res in doc["results"]:
        analyze(res, doc["examples"], os.path.join(outdir, res["name"]))
    write_summary(outdir, doc["examples"], doc["work"], doc["results"])


def write_summary(outdir: str, ex: str, work: str, results: list[dict[str, Any]]) -> None:
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump({"examples": ex, "work": work, "results": results}, f, indent=1)
    text = table(results, ex)
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write(text + "\n")
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("examples", help="pytorch/examples work tree, or its bare git directory")
    ap.add_argument("--work", default="/tmp/pyexamples-bench")
    ap.add_argument("--venv", default="/tmp/exvenv")
    ap.add_argument("--only", default="", help="comma-separated example names")
    ap.add_argument(
        "--cpu-torch",
        action="store_true",
        help="make the venv with this machine's CPU build of torch 2.13.0 and torchvision 0.28.0 "
        "(no CUDA download) instead of torch 2.14.1 and torchvision 0.29.1",
    )
    ap.add_argument("--label", default=time.strftime("run-%Y%m%d-%H%M%S"))
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="OMP_NUM_THREADS for every run (default 1: on a shared 2-core machine torch's 2 OpenMP "
        "threads slow down many times over whenever another process takes a core; 0: leave unset)",
    )
    ap.add_argument(
        "--reanalyze", action="store_true", help="run nothing: recompute LABEL's summary from its saved files"
    )
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    if a.reanalyze:
        reanalyze(os.path.join(work, "results", a.label))
        return
    os.makedirs(work, exist_ok=True)
    py = ensure_venv(os.path.abspath(a.venv), cpu_torch=a.cpu_torch)
    ex = examples_tree(a.examples, work)
    make_data(py, ex, work)
    names = [n for n in EXAMPLES if not a.only or n in a.only.split(",")]
    outdir = os.path.join(work, "results", a.label)
    if os.path.exists(outdir):
        shutil.rmtree(outdir)
    results = []
    for name in names:
        results.append(
            run_one(name, py, os.path.abspath(a.venv), ex, work, os.path.join(outdir, name), a.threads)
        )
        print(table(results[-1:], ex).splitlines()[-1], file=sys.stderr, flush=True)
    write_summary(outdir, ex, work, results)
    print(f"\ndetails: {outdir}/<example>/ (bare.log, pyspy.raw.txt, ours.json, ours.txt), summary.json")


if __name__ == "__main__":
    main()
