#!/usr/bin/env bash
# Whole runs side by side on a GPU machine: the bare script, ours (default passes), the old
# way (benchmarks/oldway.py: cProfile, the CPU-mode and, with CUDA, the CUDA-mode autograd
# runs, as the removed tool did) and the old way without its CUDA-mode run (the stand-in of
# 2026-12-04). ROUNDS rounds (default 3), the order rotated each round; medians at the end.
#   OUT=/some/folder [ROUNDS=3] bash benchmarks/device/side_by_side.sh [SCRIPT ARGS...]
# Default script: examples/train.py --device cuda --steps 10 --width 2048. Needs only python3
# with torch. Appends "round kind seconds rc" lines to $OUT/side_by_side.txt, the old way's
# own timings (its OLDWAY line) to $OUT/oldway.txt; prints the medians.
set -uo pipefail
OUT=${OUT:?set OUT to a folder for the results}
PY=${PYTHON:-python3}
ROUNDS=${ROUNDS:-3}
export PYTHONPATH="$PWD/server${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT"
if [ $# -eq 0 ]; then
    set -- examples/train.py --device cuda --steps 10 --width 2048
fi
KINDS=(bare ours oldway oldway_no_cuda_mode)

one() {  # round, kind, script args...
    local round=$1 kind=$2 begin rc
    shift 2
    begin=$(date +%s.%N)
    case $kind in
        bare) timeout 600 "$PY" "$@" > /dev/null 2>> "$OUT/side_by_side.err" ;;
        ours) timeout 600 "$PY" -m bottleneck_lsp "$@" > /dev/null 2>> "$OUT/side_by_side.err" ;;
        oldway) timeout 600 "$PY" benchmarks/oldway.py "$@" 2>> "$OUT/side_by_side.err" | grep '^OLDWAY ' >> "$OUT/oldway.txt" ;;
        oldway_no_cuda_mode) timeout 600 "$PY" benchmarks/oldway.py --no-cuda-mode "$@" 2>> "$OUT/side_by_side.err" | grep '^OLDWAY ' >> "$OUT/oldway.txt" ;;
    esac
    rc=$?
    echo "$round $kind $("$PY" -c "print(round($(date +%s.%N) - $begin, 3))") $rc" >> "$OUT/side_by_side.txt"
}

for ((round = 0; round < ROUNDS; round++)); do
    for ((i = 0; i < ${#KINDS[@]}; i++)); do
        one "$round" "${KINDS[$(((i + round) % ${#KINDS[@]}))]}" "$@"
    done
done

"$PY" - "$OUT/side_by_side.txt" <<'PYEOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    _round, kind, seconds, rc = line.split()
    runs.setdefault(kind, []).append((float(seconds), int(rc)))
medians = {kind: statistics.median(s for s, _ in got) for kind, got in runs.items()}
for kind, got in runs.items():
    print(f"{kind}: median {medians[kind]:.2f} s of {[s for s, _ in got]} (exit codes {[rc for _, rc in got]})")
if any(rc for got in runs.values() for _, rc in got):
    print("some runs FAILED (non-zero exit codes): their times mean nothing; see side_by_side.err")
for old in ("oldway", "oldway_no_cuda_mode"):
    if old in medians and "ours" in medians:
        print(f"ours / {old}: {medians['ours'] / medians[old]:.2f}x")
PYEOF
